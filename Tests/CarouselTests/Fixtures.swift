import Carousel
import TimeZones

/// t0 of every test: 2026-11-29T20:00:00Z.
let t0 = Timestamp(secondsSinceEpoch: 1_795_982_400)

func at(_ seconds: Double) -> Timestamp {
    t0 + .seconds(seconds)
}

func banners(_ count: Int, durations: [Int: Duration] = [:]) -> [Banner] {
    (0..<count).map { Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png", duration: durations[$0]) }
}

/// Five banners, 4 s interval, playing from t0.
func fiveBanners(autoplay: Bool = true) -> Carousel {
    Carousel(banners: banners(5), interval: .seconds(4), autoplay: autoplay, now: t0)
}
