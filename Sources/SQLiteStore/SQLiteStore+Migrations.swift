import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore {
    // MARK: Schema

    /// Each step of the schema, oldest first; a step is never edited once released.
    static let migrations: [Migration] = [
        Migration(
            "carousels",
            """
            CREATE TABLE store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE carousels (
                serial INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                definition TEXT NOT NULL,
                revision INTEGER NOT NULL,
                position INTEGER,
                playing_since INTEGER,
                paused_until INTEGER,
                version INTEGER NOT NULL
            );
            """),
        // Schedules and takeovers (docs/SCHEDULES.md): when the anchor was taken, and the takeover.
        Migration(
            "schedules-and-takeovers",
            """
            ALTER TABLE carousels ADD COLUMN changed_at INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE carousels ADD COLUMN takeover TEXT;
            """),
        // Proof of play (docs/STATS.md): plays by start, views and clicks by quarter hour.
        Migration(
            "proof-of-play",
            """
            CREATE TABLE plays (
                carousel INTEGER NOT NULL,
                started_at INTEGER NOT NULL,
                banner TEXT NOT NULL,
                last_shown_at INTEGER NOT NULL,
                PRIMARY KEY (carousel, started_at)
            );
            CREATE INDEX plays_by_last_shown ON plays (carousel, last_shown_at);
            CREATE TABLE engagement (
                carousel INTEGER NOT NULL,
                quarter INTEGER NOT NULL,
                banner TEXT NOT NULL,
                views INTEGER NOT NULL,
                clicks INTEGER NOT NULL,
                PRIMARY KEY (carousel, quarter, banner)
            );
            """),
        // The fleet (docs/SCREENS.md): each screen's presence and latest receipt.
        Migration(
            "screens",
            """
            CREATE TABLE screens (
                carousel INTEGER NOT NULL,
                id TEXT NOT NULL,
                last_seen INTEGER NOT NULL,
                heard_since INTEGER NOT NULL,
                via TEXT NOT NULL,
                user_agent TEXT NOT NULL,
                banner TEXT,
                version INTEGER,
                shown_at INTEGER,
                lateness INTEGER,
                out_of_step TEXT,
                verdict_since INTEGER,
                offset_ms INTEGER,
                rtt_ms INTEGER,
                PRIMARY KEY (carousel, id)
            );
            CREATE INDEX screens_by_last_seen ON screens (last_seen);
            """),
        // Views reported with ids (docs/STATS.md): each id kept 48 hours, a repeat not counted.
        Migration(
            "view-reports",
            """
            CREATE TABLE view_reports (
                carousel INTEGER NOT NULL,
                id TEXT NOT NULL,
                reported_at INTEGER NOT NULL,
                PRIMARY KEY (carousel, id)
            ) WITHOUT ROWID;
            CREATE INDEX view_reports_by_age ON view_reports (reported_at);
            """),
        // The media library (docs/MEDIA.md): each image, and its files (width 0: the original).
        Migration(
            "media",
            """
            CREATE TABLE media (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                created_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE media_files (
                media TEXT NOT NULL,
                width INTEGER NOT NULL,
                bytes BLOB NOT NULL,
                PRIMARY KEY (media, width)
            );
            """),
        // History (docs/HISTORY.md): each carousel's revisions; the definitions stored before
        // it are kept as their current revision, by no one known.
        Migration(
            "revisions",
            """
            CREATE TABLE revisions (
                carousel INTEGER NOT NULL,
                revision INTEGER NOT NULL,
                at INTEGER NOT NULL,
                actor TEXT NOT NULL,
                summary TEXT NOT NULL,
                definition TEXT NOT NULL,
                PRIMARY KEY (carousel, revision)
            );
            INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
            SELECT serial, revision, CAST((julianday('now') - 2440587.5) * 86400000000000.0 AS INTEGER), 'unrecorded',
                'as stored when history began', definition
            FROM carousels;
            """),
        // Named tokens (docs/TOKENS.md): never a secret, only its SHA-256.
        Migration(
            "tokens",
            """
            CREATE TABLE tokens (
                name TEXT PRIMARY KEY,
                role TEXT NOT NULL,
                carousels TEXT,
                expires_at INTEGER,
                created_at INTEGER NOT NULL,
                created_by TEXT NOT NULL,
                digest TEXT NOT NULL UNIQUE
            );
            """),
        // The audit log (docs/AUDIT.md): appended in each write's transaction, never changed.
        Migration(
            "audit-log",
            """
            CREATE TABLE audit (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                carousel TEXT,
                target TEXT,
                revision INTEGER,
                request_id TEXT
            );
            CREATE INDEX audit_by_at ON audit (at);
            """),
        // Scheduled changes (docs/SCHEDULED.md): each admin request to make at its time.
        Migration(
            "pending-changes",
            """
            CREATE TABLE pending (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                carousel INTEGER NOT NULL,
                at INTEGER NOT NULL,
                method TEXT NOT NULL,
                path TEXT NOT NULL,
                body TEXT NOT NULL,
                if_match TEXT,
                actor TEXT NOT NULL,
                request_id TEXT,
                created_at INTEGER NOT NULL
            );
            CREATE INDEX pending_by_carousel ON pending (carousel);
            """),
        // Webhooks (docs/WEBHOOKS.md): the secret kept as given, to sign each delivery.
        Migration(
            "webhooks",
            """
            CREATE TABLE webhooks (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                url TEXT NOT NULL,
                events TEXT NOT NULL,
                secret TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                created_by TEXT NOT NULL
            );
            """),
        // Webhook deliveries (docs/WEBHOOKS.md): one row per event and webhook, queued in the
        // transaction of what caused it; due while next_attempt_at is set.
        Migration(
            "webhook-deliveries",
            """
            CREATE TABLE deliveries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                webhook INTEGER NOT NULL,
                event TEXT NOT NULL,
                type TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER,
                claimed_until INTEGER,
                last_attempt_at INTEGER,
                last_status INTEGER,
                last_error TEXT,
                delivered_at INTEGER,
                UNIQUE (webhook, event)
            );
            CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
            """),
        // The turn in a weighted cycle (docs/WEIGHTS.md); NULL: the banner's first turn.
        Migration("weighted-turn", "ALTER TABLE carousels ADD COLUMN turn INTEGER;"),
        // Each audience's anchor (docs/AUDIENCES.md), JSON; NULL: no audiences.
        Migration("audience-anchors", "ALTER TABLE carousels ADD COLUMN audiences TEXT;"),
        // Audiences' screens (docs/AUDIENCES.md): plays and counts of each audience's screens apart
        // ('' for screens of no audience, which every row before was), and a screen's audience.
        Migration(
            "audience-stats",
            """
            CREATE TABLE plays_by_audience (
                carousel INTEGER NOT NULL,
                audience TEXT NOT NULL,
                started_at INTEGER NOT NULL,
                banner TEXT NOT NULL,
                last_shown_at INTEGER NOT NULL,
                PRIMARY KEY (carousel, audience, started_at)
            );
            INSERT INTO plays_by_audience SELECT carousel, '', started_at, banner, last_shown_at FROM plays;
            DROP TABLE plays;
            ALTER TABLE plays_by_audience RENAME TO plays;
            CREATE INDEX plays_by_last_shown ON plays (carousel, audience, last_shown_at);
            CREATE TABLE engagement_by_audience (
                carousel INTEGER NOT NULL,
                audience TEXT NOT NULL,
                quarter INTEGER NOT NULL,
                banner TEXT NOT NULL,
                views INTEGER NOT NULL,
                clicks INTEGER NOT NULL,
                PRIMARY KEY (carousel, audience, quarter, banner)
            );
            INSERT INTO engagement_by_audience SELECT carousel, '', quarter, banner, views, clicks FROM engagement;
            DROP TABLE engagement;
            ALTER TABLE engagement_by_audience RENAME TO engagement;
            ALTER TABLE screens ADD COLUMN audience TEXT;
            """),
        // A screen's claim (docs/SCREENS.md, "A screen's own reports"): the digest of the key it
        // first reported with; NULL: unclaimed.
        Migration("screen-claims", "ALTER TABLE screens ADD COLUMN claim TEXT;"),
        // Each attempt of a delivery (docs/WEBHOOKS.md), JSON: `[[at, status, error], …]`.
        Migration("delivery-attempt-log", "ALTER TABLE deliveries ADD COLUMN attempt_log TEXT;"),
        // Screens' rows are rewritten thousands of times a second (docs/SCREENS.md, "The fleet"):
        // kept in their key's order (one B-tree to find a row, not a key index and then the table),
        // and without the index on last_seen, which each write moved for a delete once a minute
        // that reads the table through (docs/PERFORMANCE.md, "The fleet").
        Migration(
            "screens-by-key",
            """
            CREATE TABLE screens_by_key (
                carousel INTEGER NOT NULL,
                id TEXT NOT NULL,
                last_seen INTEGER NOT NULL,
                heard_since INTEGER NOT NULL,
                via TEXT NOT NULL,
                user_agent TEXT NOT NULL,
                banner TEXT,
                version INTEGER,
                shown_at INTEGER,
                lateness INTEGER,
                out_of_step TEXT,
                verdict_since INTEGER,
                offset_ms INTEGER,
                rtt_ms INTEGER,
                audience TEXT,
                claim TEXT,
                PRIMARY KEY (carousel, id)
            ) WITHOUT ROWID;
            INSERT INTO screens_by_key SELECT carousel, id, last_seen, heard_since, via, user_agent, banner,
                version, shown_at, lateness, out_of_step, verdict_since, offset_ms, rtt_ms, audience, claim
                FROM screens;
            DROP TABLE screens;
            ALTER TABLE screens_by_key RENAME TO screens;
            """),
    ]

    /// Brings the store to this build's schema; returns its identity. A store on the current
    /// schema is only read here: a read-only one still serves.
    static func migrate(_ connection: SQLiteConnection, path: String) throws -> String {
        if case .apply = try plan(connection, path: path) {
            try migrateSteps(connection, path: path)
        }
        let statement = try connection.statement("SELECT value FROM store WHERE key = 'identity'")
        defer { statement.reset() }
        guard try statement.step(), let identity = statement.text(0) else {
            throw StoreError.unusable("\(path) has no identity row; it was not written by banner-server")
        }
        return identity
    }

    /// What the store needs (`MigrationPlan`): the steps it recorded, or, for a store from before
    /// steps were named, the first `user_version` of them. Throws the refusal of a store a newer
    /// banner-server wrote.
    static func plan(_ connection: SQLiteConnection, path: String) throws -> MigrationPlan {
        let version = try userVersion(connection)
        let applied: [String]
        if try hasLedger(connection) {
            applied = try appliedSteps(connection)
        } else if let legacy = MigrationPlan.applied(byVersion: version, known: migrations) {
            applied = legacy
        } else {
            throw MigrationPlan.refusal(of: path, version: version, unknown: [], known: migrations)
        }
        let plan = MigrationPlan(applied: applied, version: version, known: migrations)
        if case .newer(let unknown) = plan {
            throw MigrationPlan.refusal(
                of: path, version: max(version, applied.count), unknown: unknown, known: migrations)
        }
        return plan
    }

    /// The steps the store lacks, in one transaction (one process holds the file: `StoreLockFile`),
    /// each recorded by name as it is applied; `user_version` counts them, as builds from before
    /// names compare it.
    static func migrateSteps(_ connection: SQLiteConnection, path: String) throws {
        guard case .apply(let steps) = try plan(connection, path: path) else { return }
        let legacy =
            try hasLedger(connection)
            ? nil : MigrationPlan.applied(byVersion: try userVersion(connection), known: migrations)
        try connection.transaction { () throws(SQLiteError) in
            if let legacy {
                try connection.execute(
                    "CREATE TABLE schema_migrations (position INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
                for name in legacy { try record(name, in: connection) }
            }
            for step in steps {
                try connection.execute(step.sql)
                try record(step.name, in: connection)
            }
            if steps.first == migrations.first {
                let identity = String(UInt64.random(in: .min ... .max), radix: 36)
                try connection.statement("INSERT INTO store (key, value) VALUES ('identity', ?1)")
                    .bind(.text(identity)).run()
            }
            let count = try appliedSteps(connection).count
            try connection.execute("PRAGMA user_version = \(count)")
        }
    }

    private static func record(_ name: String, in connection: SQLiteConnection) throws(SQLiteError) {
        try connection.statement(
            "INSERT INTO schema_migrations (position, name) VALUES ((SELECT count(*) FROM schema_migrations), ?1)"
        ).bind(.text(name)).run()
    }

    private static func hasLedger(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let statement = try connection.statement(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        defer { statement.reset() }
        return try statement.step()
    }

    /// The names of the steps applied, oldest first.
    private static func appliedSteps(_ connection: SQLiteConnection) throws(SQLiteError) -> [String] {
        let statement = try connection.statement("SELECT name FROM schema_migrations ORDER BY position")
        defer { statement.reset() }
        var names: [String] = []
        while try statement.step() { names.append(statement.text(0) ?? "") }
        return names
    }

    static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("PRAGMA user_version")
        defer { statement.reset() }
        _ = try statement.step()
        return Int(statement.integer(0) ?? 0)
    }
}
