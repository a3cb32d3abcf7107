import JSON
import TimeZones

/// What a write did, as the audit log names it (docs/AUDIT.md). A string underneath, so that an
/// entry a later build wrote with an action this one does not know is still read back as it is.
public struct AuditAction: RawRepresentable, Sendable, Hashable {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let createCarousel = AuditAction(rawValue: "carousel.create")
    public static let replaceCarousel = AuditAction(rawValue: "carousel.replace")
    public static let patchCarousel = AuditAction(rawValue: "carousel.patch")
    public static let deleteCarousel = AuditAction(rawValue: "carousel.delete")
    public static let restoreRevision = AuditAction(rawValue: "carousel.restore")
    public static let importCarousel = AuditAction(rawValue: "carousel.import")
    public static let seedCarousel = AuditAction(rawValue: "carousel.seed")
    public static let addBanner = AuditAction(rawValue: "banner.add")
    public static let replaceBanner = AuditAction(rawValue: "banner.replace")
    public static let patchBanner = AuditAction(rawValue: "banner.patch")
    public static let deleteBanner = AuditAction(rawValue: "banner.delete")
    public static let reorderBanners = AuditAction(rawValue: "banners.reorder")
    public static let next = AuditAction(rawValue: "command.next")
    public static let previous = AuditAction(rawValue: "command.previous")
    public static let jump = AuditAction(rawValue: "command.jump")
    public static let pause = AuditAction(rawValue: "command.pause")
    public static let resume = AuditAction(rawValue: "command.resume")
    public static let startTakeover = AuditAction(rawValue: "takeover.start")
    public static let endTakeover = AuditAction(rawValue: "takeover.end")
    public static let uploadMedia = AuditAction(rawValue: "media.upload")
    public static let deleteMedia = AuditAction(rawValue: "media.delete")
    public static let createToken = AuditAction(rawValue: "token.create")
    public static let revokeToken = AuditAction(rawValue: "token.revoke")
    public static let scheduleChange = AuditAction(rawValue: "change.schedule")
    public static let cancelChange = AuditAction(rawValue: "change.cancel")
    public static let skipChange = AuditAction(rawValue: "change.skip")
    public static let createWebhook = AuditAction(rawValue: "webhook.create")
    public static let deleteWebhook = AuditAction(rawValue: "webhook.delete")
    public static let forgetScreen = AuditAction(rawValue: "screen.forget")

    /// Every action this build writes.
    public static let all: [AuditAction] = [
        .createCarousel,
        .replaceCarousel,
        .patchCarousel,
        .deleteCarousel,
        .restoreRevision,
        .importCarousel,
        .seedCarousel,
        .addBanner,
        .replaceBanner,
        .patchBanner,
        .deleteBanner,
        .reorderBanners,
        .next,
        .previous,
        .jump,
        .pause,
        .resume,
        .startTakeover,
        .endTakeover,
        .uploadMedia,
        .deleteMedia,
        .createToken,
        .revokeToken,
        .scheduleChange,
        .cancelChange,
        .skipChange,
        .createWebhook,
        .deleteWebhook,
        .forgetScreen,
    ]
}

/// Who asked for a write, and in which request: what the audit log and the history name.
public struct Requester: Sendable, Hashable {
    /// `env:admin`, `env:control`, `loopback`, `anonymous`, a token's name; `import` and `seed`
    /// for the command line's and the first start's writes.
    public let actor: String
    /// The request's `X-Request-Id`, as the client or its proxy sent it or as the service made it;
    /// nil for writes that come from no request.
    public let requestID: String?

    public init(actor: String, requestID: String? = nil) {
        self.actor = actor
        self.requestID = requestID
    }
}

/// One entry of the audit log, as a write hands it to its store: appended in the write's own
/// transaction, where the store numbers it (`AuditRecord.seq`).
public struct AuditEntry: Sendable, Hashable {
    public let at: Timestamp
    public let actor: String
    public let action: AuditAction
    /// The carousel written, by name; nil for the media library and tokens.
    public let carousel: String?
    /// What in it: a banner's id, an image's id, a token's name, the revision restored.
    public let target: String?
    /// The carousel's revision after the write (the one deleted, for a deletion).
    public let revision: UInt64?
    public let requestID: String?

    public init(
        _ action: AuditAction, by requester: Requester, at: Timestamp, carousel: String? = nil, target: String? = nil,
        revision: UInt64? = nil
    ) {
        self.at = at
        self.actor = requester.actor
        self.action = action
        self.carousel = carousel
        self.target = target
        self.revision = revision
        self.requestID = requester.requestID
    }

    /// `action` by the one `attribution` names, when it says.
    public init(
        _ action: AuditAction, _ attribution: Attribution, carousel: String? = nil, target: String? = nil,
        revision: UInt64? = nil
    ) {
        self.init(
            action, by: attribution.requester, at: attribution.at, carousel: carousel, target: target,
            revision: revision)
    }
}

extension AuditEntry {
    /// Its fields after `seq` and `at`, as `GET /audit` writes them (docs/AUDIT.md): what a
    /// webhook's `data` carries of an audited write too (docs/WEBHOOKS.md).
    public func addFields(to object: inout JSONObject) {
        object.add("actor", actor)
        object.add("action", action.rawValue)
        object.add("carousel", carousel)
        object.add("target", target)
        object.add("revision", revision)
        object.add("requestId", requestID)
    }
}

/// An entry as the store keeps it: numbered in the order the store appended it.
public struct AuditRecord: Sendable, Hashable {
    public let seq: Int64
    public let entry: AuditEntry

    public init(seq: Int64, entry: AuditEntry) {
        self.seq = seq
        self.entry = entry
    }

    /// A row of the SQL stores' `audit` table as read (times in nanoseconds since the epoch).
    public init(
        seq: Int64, at: Int64, actor: String, action: String, carousel: String?, target: String?, revision: Int64?,
        requestID: String?
    ) {
        self.init(
            seq: seq,
            entry: AuditEntry(
                AuditAction(rawValue: action), by: Requester(actor: actor, requestID: requestID),
                at: Timestamp(nanosecondsSinceEpoch: at), carousel: carousel, target: target,
                revision: revision.map { UInt64(clamping: $0) }))
    }
}

/// Which entries `GET /audit` asks for: those of `from..<to` (either open), of one carousel or
/// one actor when given, numbered below `before` (the page before), newest first, `limit` at most.
public struct AuditQuery: Sendable, Hashable {
    public var from: Timestamp?
    public var to: Timestamp?
    public var carousel: String?
    public var actor: String?
    public var before: Int64?
    public var limit: Int

    public init(
        from: Timestamp? = nil, to: Timestamp? = nil, carousel: String? = nil, actor: String? = nil,
        before: Int64? = nil, limit: Int = 1000
    ) {
        self.from = from
        self.to = to
        self.carousel = carousel
        self.actor = actor
        self.before = before
        self.limit = limit
    }

    /// Whether `record` is one this query asks for (the limit aside): the memory store's filter,
    /// and what the SQL stores' `WHERE` says.
    public func matches(_ record: AuditRecord) -> Bool {
        let entry = record.entry
        return from.map { entry.at >= $0 } ?? true && to.map { entry.at < $0 } ?? true
            && carousel.map { entry.carousel == $0 } ?? true && actor.map { entry.actor == $0 } ?? true
            && before.map { record.seq < $0 } ?? true
    }
}

/// What a change stores (`CarouselStore.modify`): the carousel as it becomes, and the audit
/// log's entries recording it, appended in the same transaction.
public struct CarouselWrite: Sendable {
    public var carousel: StoredCarousel
    public var audit: [AuditEntry]
    /// The pending change this write makes (docs/SCHEDULED.md), claimed in its transaction.
    public var applying: Int64?

    public init(_ carousel: StoredCarousel, audit: [AuditEntry], applying: Int64? = nil) {
        self.carousel = carousel
        self.audit = audit
        self.applying = applying
    }
}

extension AuditRecord {
    /// The columns a SQL store keeps an entry in, in the order `init(row:)` reads them.
    public static let columns = "seq, at, actor, action, carousel, target, revision, request_id"

    /// A row of `columns` as read.
    public init(row: some SQLRow) {
        self.init(
            seq: row.integer(0) ?? 0, at: row.integer(1) ?? 0, actor: row.text(2) ?? "", action: row.text(3) ?? "",
            carousel: row.text(4), target: row.text(5), revision: row.integer(6), requestID: row.text(7))
    }
}
