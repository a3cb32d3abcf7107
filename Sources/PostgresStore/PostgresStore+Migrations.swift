import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore {
    // MARK: Schema

    /// Each step of the schema, oldest first; a step is never edited once released.
    static let migrations: [Migration] = [
        Migration(
            "carousels",
            """
            CREATE TABLE banner_store (key text PRIMARY KEY, value text NOT NULL);
            CREATE TABLE carousels (
                serial bigserial PRIMARY KEY,
                name text NOT NULL UNIQUE,
                definition text NOT NULL,
                revision bigint NOT NULL,
                position bigint,
                playing_since bigint,
                paused_until bigint,
                version bigint NOT NULL
            );
            """),
        // Schedules and takeovers (docs/SCHEDULES.md): when the anchor was taken, and the takeover.
        Migration(
            "schedules-and-takeovers",
            """
            ALTER TABLE carousels ADD COLUMN changed_at bigint NOT NULL DEFAULT 0, ADD COLUMN takeover text;
            """),
        // Proof of play (docs/STATS.md): plays by start, views and clicks by quarter hour.
        Migration(
            "proof-of-play",
            """
            CREATE TABLE plays (
                carousel bigint NOT NULL,
                started_at bigint NOT NULL,
                banner text NOT NULL,
                last_shown_at bigint NOT NULL,
                PRIMARY KEY (carousel, started_at)
            );
            CREATE INDEX plays_by_last_shown ON plays (carousel, last_shown_at);
            CREATE TABLE engagement (
                carousel bigint NOT NULL,
                quarter bigint NOT NULL,
                banner text NOT NULL,
                views bigint NOT NULL,
                clicks bigint NOT NULL,
                PRIMARY KEY (carousel, quarter, banner)
            );
            """),
        // The fleet (docs/SCREENS.md): each screen's presence and latest receipt.
        Migration(
            "screens",
            """
            CREATE TABLE screens (
                carousel bigint NOT NULL,
                id text NOT NULL,
                last_seen bigint NOT NULL,
                heard_since bigint NOT NULL,
                via text NOT NULL,
                user_agent text NOT NULL,
                banner text,
                version bigint,
                shown_at bigint,
                lateness bigint,
                out_of_step text,
                verdict_since bigint,
                offset_ms bigint,
                rtt_ms bigint,
                PRIMARY KEY (carousel, id)
            );
            CREATE INDEX screens_by_last_seen ON screens (last_seen);
            """),
        // Views reported with ids (docs/STATS.md): each id kept 48 hours, a repeat not counted.
        Migration(
            "view-reports",
            """
            CREATE TABLE view_reports (
                carousel bigint NOT NULL,
                id text NOT NULL,
                reported_at bigint NOT NULL,
                PRIMARY KEY (carousel, id)
            );
            CREATE INDEX view_reports_by_age ON view_reports (reported_at);
            """),
        // The media library (docs/MEDIA.md): each image, and its files (width 0: the original).
        Migration(
            "media",
            """
            CREATE TABLE media (
                id text PRIMARY KEY,
                type text NOT NULL,
                width bigint NOT NULL,
                height bigint NOT NULL,
                created_at bigint NOT NULL
            );
            CREATE TABLE media_files (
                media text NOT NULL REFERENCES media (id) ON DELETE CASCADE,
                width bigint NOT NULL,
                bytes bytea NOT NULL,
                PRIMARY KEY (media, width)
            );
            """),
        // History (docs/HISTORY.md): each carousel's revisions; the definitions stored before
        // it are kept as their current revision, by no one known.
        Migration(
            "revisions",
            """
            CREATE TABLE revisions (
                carousel bigint NOT NULL,
                revision bigint NOT NULL,
                at bigint NOT NULL,
                actor text NOT NULL,
                summary text NOT NULL,
                definition text NOT NULL,
                PRIMARY KEY (carousel, revision)
            );
            INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
            SELECT serial, revision, (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint, 'unrecorded',
                'as stored when history began', definition
            FROM carousels;
            """),
        // Named tokens (docs/TOKENS.md): never a secret, only its SHA-256.
        Migration(
            "tokens",
            """
            CREATE TABLE tokens (
                name text PRIMARY KEY,
                role text NOT NULL,
                carousels text,
                expires_at bigint,
                created_at bigint NOT NULL,
                created_by text NOT NULL,
                digest text NOT NULL UNIQUE
            );
            """),
        // The audit log (docs/AUDIT.md): appended in each write's transaction, never changed.
        Migration(
            "audit-log",
            """
            CREATE TABLE audit (
                seq bigserial PRIMARY KEY,
                at bigint NOT NULL,
                actor text NOT NULL,
                action text NOT NULL,
                carousel text,
                target text,
                revision bigint,
                request_id text
            );
            CREATE INDEX audit_by_at ON audit (at);
            """),
        // Scheduled changes (docs/SCHEDULED.md): each admin request to make at its time.
        Migration(
            "pending-changes",
            """
            CREATE TABLE pending (
                id bigserial PRIMARY KEY,
                carousel bigint NOT NULL,
                at bigint NOT NULL,
                method text NOT NULL,
                path text NOT NULL,
                body text NOT NULL,
                if_match text,
                actor text NOT NULL,
                request_id text,
                created_at bigint NOT NULL
            );
            CREATE INDEX pending_by_carousel ON pending (carousel);
            """),
        // Webhooks (docs/WEBHOOKS.md): the secret kept as given, to sign each delivery.
        Migration(
            "webhooks",
            """
            CREATE TABLE webhooks (
                id bigserial PRIMARY KEY,
                url text NOT NULL,
                events text NOT NULL,
                secret text NOT NULL,
                created_at bigint NOT NULL,
                created_by text NOT NULL
            );
            """),
        // Webhook deliveries (docs/WEBHOOKS.md): one row per event and webhook, queued in the
        // transaction of what caused it; due while next_attempt_at is set.
        Migration(
            "webhook-deliveries",
            """
            CREATE TABLE deliveries (
                id bigserial PRIMARY KEY,
                webhook bigint NOT NULL,
                event text NOT NULL,
                type text NOT NULL,
                body text NOT NULL,
                created_at bigint NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at bigint,
                claimed_until bigint,
                last_attempt_at bigint,
                last_status integer,
                last_error text,
                delivered_at bigint,
                UNIQUE (webhook, event)
            );
            CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
            """),
        // The turn in a weighted cycle (docs/WEIGHTS.md); NULL: the banner's first turn.
        Migration("weighted-turn", "ALTER TABLE carousels ADD COLUMN turn bigint;"),
        // Each audience's anchor (docs/AUDIENCES.md), JSON; NULL: no audiences.
        Migration("audience-anchors", "ALTER TABLE carousels ADD COLUMN audiences text;"),
        // Audiences' screens (docs/AUDIENCES.md): plays and counts of each audience's screens apart
        // ('' for screens of no audience, which every row before was), and a screen's audience.
        Migration(
            "audience-stats",
            """
            ALTER TABLE plays ADD COLUMN audience text NOT NULL DEFAULT '';
            ALTER TABLE plays DROP CONSTRAINT plays_pkey, ADD PRIMARY KEY (carousel, audience, started_at);
            DROP INDEX plays_by_last_shown;
            CREATE INDEX plays_by_last_shown ON plays (carousel, audience, last_shown_at);
            ALTER TABLE engagement ADD COLUMN audience text NOT NULL DEFAULT '';
            ALTER TABLE engagement DROP CONSTRAINT engagement_pkey, ADD PRIMARY KEY (carousel, audience, quarter, banner);
            ALTER TABLE screens ADD COLUMN audience text;
            """),
        // A screen's claim (docs/SCREENS.md, "A screen's own reports"): the digest of the key it
        // first reported with; NULL: unclaimed.
        Migration("screen-claims", "ALTER TABLE screens ADD COLUMN claim text;"),
        // Each attempt of a delivery (docs/WEBHOOKS.md), JSON: `[[at, status, error], …]`.
        Migration("delivery-attempt-log", "ALTER TABLE deliveries ADD COLUMN attempt_log jsonb;"),
        // Screens' rows are rewritten thousands of times a second (docs/SCREENS.md, "The fleet"):
        // with no index on a column they change, PostgreSQL updates them in place (HOT); the
        // delete by last_seen once a minute reads the table through. (SQLite's step of this name
        // also keeps the rows in their key's order.)
        Migration("screens-by-key", "DROP INDEX screens_by_last_seen;"),
    ]

    /// Brings the database to this build's schema, in one transaction under an advisory lock (so
    /// that replicas starting together migrate once), each step recorded by name as it is
    /// applied; `schema_version` counts them, as builds from before names compare it. Returns the
    /// store's identity.
    static func migrate(_ connection: PostgresConnection, describe: String) throws -> String {
        var refusal: StoreError?
        try transaction(connection) { () throws(PostgresError) in
            try connection.run("SELECT pg_advisory_xact_lock(hashtext('banner-carousel migrations'))")
            let version = try storedVersion(connection)
            let ledger = try connection.run("SELECT to_regclass('banner_migrations') IS NOT NULL").first?[0] == "t"
            let applied: [String]
            if ledger {
                applied = try connection.run("SELECT name FROM banner_migrations ORDER BY position").compactMap {
                    $0[0]
                }
            } else if let legacy = MigrationPlan.applied(byVersion: version, known: migrations) {
                applied = legacy
            } else {
                refusal = MigrationPlan.refusal(of: describe, version: version, unknown: [], known: migrations)
                return
            }
            let steps: [Migration]
            switch MigrationPlan(applied: applied, version: version, known: migrations) {
            case .current: return
            case .newer(let unknown):
                refusal = MigrationPlan.refusal(
                    of: describe, version: max(version, applied.count), unknown: unknown, known: migrations)
                return
            case .apply(let pending): steps = pending
            }
            if !ledger {
                try connection.run(
                    "CREATE TABLE banner_migrations (position bigint PRIMARY KEY, name text NOT NULL UNIQUE)")
                for name in applied { try record(name, on: connection) }
            }
            for step in steps {
                try connection.run(step.sql)
                try record(step.name, on: connection)
            }
            if steps.first == migrations.first {
                try connection.execute(
                    "INSERT INTO banner_store (key, value) VALUES ('identity', $1)",
                    ["p" + String(UInt64.random(in: .min ... .max), radix: 36)])
            }
            try connection.execute(
                """
                INSERT INTO banner_store (key, value)
                VALUES ('schema_version', (SELECT count(*) FROM banner_migrations)::text)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [])
        }
        if let refusal { throw refusal }
        let rows = try connection.run("SELECT value FROM banner_store WHERE key = 'identity'")
        guard let identity = rows.first?[0] ?? nil else {
            throw StoreError.unusable("\(describe) has no identity row; it was not written by banner-server")
        }
        return identity
    }

    /// The count of steps the database says it has applied (0: none, or not a store yet).
    private static func storedVersion(_ connection: PostgresConnection) throws(PostgresError) -> Int {
        guard try connection.run("SELECT to_regclass('banner_store') IS NOT NULL").first?[0] == "t" else { return 0 }
        let rows = try connection.run("SELECT value FROM banner_store WHERE key = 'schema_version'")
        return rows.first?[0].flatMap { Int($0) } ?? 0
    }

    private static func record(_ name: String, on connection: PostgresConnection) throws(PostgresError) {
        try connection.execute(
            "INSERT INTO banner_migrations (position, name) VALUES ((SELECT count(*) FROM banner_migrations), $1)",
            [name])
    }
}
