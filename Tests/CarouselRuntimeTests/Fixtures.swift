import Carousel
import Store
import TimeZones

/// 2026-11-29T20:00:00Z
let t0 = Timestamp(secondsSinceEpoch: 1_795_982_400)
/// Whom the tests' admin changes are attributed to.
let byTests = Attribution(actor: "tests", at: t0)
/// Who the tests' requests come from.
let tester = Requester(actor: "tests", requestID: "test-request")

func sampleBanners(_ count: Int) -> [Banner] {
    (0..<count).map {
        Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png", caption: "Banner \($0)")
    }
}
