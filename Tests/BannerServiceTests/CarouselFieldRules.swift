/// A carousel's fields that break a rule, as a v1 file gives them, and the message naming the
/// field: the configuration file, `import` and the admin API all say the same.
let carouselFieldRules: [(String, String)] = [
    (#"{"interval": 0}"#, "interval: must be a number of seconds greater than 0, got 0.0"),
    (#"{"interval": -2}"#, "interval: must be a number of seconds greater than 0, got -2.0"),
    (#"{"interval": "4"}"#, "interval: must be a number, got a string"),
    (#"{"autoplay": "yes"}"#, "autoplay: must be true or false, got a string"),
    (#"{"banners": {}}"#, "banners: must be an array, got an object"),
    (#"{"banners": ["a.png"]}"#, "banners[0]: must be a JSON object, got a string"),
    (
        #"{"banners": [{"image": "https://x.example/a.png"}]}"#,
        "banners[0].id: required field is missing; must be a string"
    ),
    (
        #"{"banners": [{"id": "a b", "image": "https://x.example/a.png"}]}"#,
        "banners[0].id: 'a b' is not a valid id; use 1 to 64 of A-Z a-z 0-9 . _ -"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a.png"}, {"id": "a", "image": "https://x.example/b.png"}]}"#,
        "banners[1].id: duplicate id 'a' (also banners[0])"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a"}, {"id": "b", "image": "https://x.example/b"}, {"id": "c", "image": "c.png"}]}"#,
        "banners[2].image: not an absolute http(s) URL"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "link": "/sale"}]}"#,
        "banners[0].link: not an absolute http(s) URL"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "duration": 0}]}"#,
        "banners[0].duration: must be a number of seconds greater than 0, got 0.0"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "caption": 7}]}"#,
        "banners[0].caption: must be a string, got a number"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "title": "x"}]}"#,
        "banners[0].title: unknown field; expected one of: id, image, caption, link, duration"
    ),
]
