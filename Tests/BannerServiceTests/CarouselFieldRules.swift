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
        #"{"banners": [{"id": "a", "image": "https://x.example/a"}, {"id": "b", "image": "https://x.example/b"}, {"id": "c", "image": "cdn.example.com/c"}]}"#,
        "banners[2].image: not an absolute http(s) URL nor a media library path (/media/ID)"
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
        "banners[0].title: unknown field; expected one of: id, image, caption, link, duration, weight, audiences, enabled, startsAt, endsAt, windows"
    ),
    // Weights (docs/WEIGHTS.md)
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "weight": 0}]}"#,
        "banners[0].weight: 0 is out of range; use a whole number from 1 to 100 (turns per cycle)"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a"}, {"id": "b", "image": "https://x.example/b", "weight": 101}]}"#,
        "banners[1].weight: 101 is out of range; use a whole number from 1 to 100 (turns per cycle)"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "weight": 1.5}]}"#,
        "banners[0].weight: must be an integer, got a number"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "weight": "3"}]}"#,
        "banners[0].weight: must be an integer, got a string"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "weight": 99999999999999999999}]}"#,
        "banners[0].weight: 99999999999999999999 is out of range; use a whole number from 1 to 100 (turns per cycle)"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "weight": -1}]}"#,
        "banners[0].weight: -1 is out of range; use a whole number from 1 to 100 (turns per cycle)"
    ),
    // Audiences (docs/AUDIENCES.md)
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "audiences": "de"}]}"#,
        "banners[0].audiences: must be an array, got a string"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "audiences": [7]}]}"#,
        "banners[0].audiences[0]: must be a string, got a number"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "audiences": ["de", "Store Berlin"]}]}"#,
        "banners[0].audiences[1]: 'Store Berlin' is not a valid name; an audience is 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "audiences": ["de", "de"]}]}"#,
        "banners[0].audiences[1]: 'de' is listed twice"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "audiences": ["a00", "a01", "a02", "a03", "a04", "a05", "a06", "a07", "a08", "a09", "a10", "a11", "a12", "a13", "a14", "a15", "a16", "a17", "a18", "a19", "a20", "a21", "a22", "a23", "a24", "a25", "a26", "a27", "a28", "a29", "a30", "a31", "a32", "a33", "a34", "a35", "a36", "a37", "a38", "a39", "a40", "a41", "a42", "a43", "a44", "a45", "a46", "a47", "a48", "a49", "a50", "a51", "a52", "a53", "a54", "a55", "a56", "a57", "a58", "a59", "a60", "a61", "a62", "a63", "a64"]}]}"#,
        "banners: the banners name 65 audiences; a carousel may have at most 64 (use fewer audiences, or a carousel per group of them)"
    ),
    // Schedules (docs/SCHEDULES.md)
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "enabled": "no"}]}"#,
        "banners[0].enabled: must be true or false, got a string"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "startsAt": "2026-03-01"}]}"#,
        "banners[0].startsAt: not an RFC 3339 date-time from 1900 to 2200 like 2026-03-01T00:00:00Z or 2026-03-01T09:00:00+01:00, got '2026-03-01'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "endsAt": "2026-02-30T00:00:00Z"}]}"#,
        "banners[0].endsAt: not an RFC 3339 date-time from 1900 to 2200 like 2026-03-01T00:00:00Z or 2026-03-01T09:00:00+01:00, got '2026-02-30T00:00:00Z'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "startsAt": "4664-09-06T12:56:16+18:16"}]}"#,
        "banners[0].startsAt: not an RFC 3339 date-time from 1900 to 2200 like 2026-03-01T00:00:00Z or 2026-03-01T09:00:00+01:00, got '4664-09-06T12:56:16+18:16'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "startsAt": "2026-03-01T10:00:00+01:00", "endsAt": "2026-03-01T09:00:00Z"}]}"#,
        "banners[0].endsAt: must be after startsAt (2026-03-01T09:00:00.000Z), got 2026-03-01T09:00:00.000Z"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": {}}]}"#,
        "banners[0].windows: must be an array, got an object"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a"}, {"id": "b", "image": "https://x.example/b", "windows": [{"days": ["mon", "tue", "Sat"], "from": "09:00", "to": "17:00"}]}]}"#,
        "banners[1].windows[0].days[2]: not a day (mon…sun), got 'Sat'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"days": ["mon", "mon"], "from": "09:00", "to": "17:00"}]}]}"#,
        "banners[0].windows[0].days[1]: 'mon' is listed twice"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"days": [], "from": "09:00", "to": "17:00"}]}]}"#,
        "banners[0].windows[0].days: lists no day; omit it for every day"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"from": "9:00", "to": "17:00"}]}]}"#,
        "banners[0].windows[0].from: not a time of day HH:MM, got '9:00'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"from": "24:00", "to": "17:00"}]}]}"#,
        "banners[0].windows[0].from: not a time of day HH:MM, got '24:00'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"from": "09:00"}]}]}"#,
        "banners[0].windows[0].to: required field is missing; must be a string"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"from": "09:00", "to": "17:60"}]}]}"#,
        "banners[0].windows[0].to: not a time of day HH:MM (or 24:00), got '17:60'"
    ),
    (
        #"{"banners": [{"id": "a", "image": "https://x.example/a", "windows": [{"from": "09:00", "to": "17:00", "day": "mon"}]}]}"#,
        "banners[0].windows[0].day: unknown field; expected one of: days, from, to"
    ),
]

/// A carousel's own settings that break a rule, as a definition (a v2 file, `import`, the admin API)
/// gives them, and the message naming the field.
let carouselSettingRules: [(String, String)] = [
    (#"{"timeZone": "Europe/Berlinn"}"#, #"timeZone: unknown time zone "Europe/Berlinn""#),
    (#"{"timeZone": "../../etc/passwd"}"#, #"timeZone: unknown time zone "../../etc/passwd""#),
    (#"{"timeZone": 1}"#, "timeZone: must be a string, got a number"),
    (
        #"{"fallback": "zz", "banners": [{"id": "a", "image": "https://x.example/a"}]}"#,
        "fallback: no banner has the id 'zz'; name one of `banners`"
    ),
    (#"{"fallback": 3}"#, "fallback: must be a string or null, got a number"),
]
