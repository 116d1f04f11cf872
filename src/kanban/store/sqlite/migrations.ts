// Numbered, forward-only schema migrations, tracked by PRAGMA user_version.
export const MIGRATIONS: readonly string[] = [
  // 1: the board
  `
  CREATE TABLE tasks (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    assignee TEXT,
    status TEXT NOT NULL CHECK (status IN ('todo','ready','running','blocked','done','archived')),
    priority INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    started_at INTEGER,
    completed_at INTEGER,
    max_runtime_seconds REAL,
    max_retries INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_failure_error TEXT,
    result TEXT,
    summary TEXT,
    current_run_id TEXT,
    block_reason TEXT,
    not_before INTEGER,
    origin TEXT NOT NULL,
    lease_expires_at INTEGER,
    last_heartbeat_at INTEGER,
    terminating TEXT
  );
  CREATE INDEX tasks_status ON tasks (status, seq);
  CREATE INDEX tasks_assignee ON tasks (assignee, seq);
  CREATE INDEX tasks_dispatch ON tasks (status, priority DESC, seq) WHERE status = 'ready';

  CREATE TABLE task_parents (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    parent_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, parent_id)
  );
  CREATE INDEX task_parents_parent ON task_parents (parent_id);

  CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    profile TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    pid INTEGER,
    pgid INTEGER,
    start_time INTEGER,
    boot_id TEXT,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    outcome TEXT,
    exit_code INTEGER,
    signal TEXT,
    error TEXT,
    summary TEXT,
    cpu_percent_max REAL,
    rss_bytes_max INTEGER,
    log_path TEXT NOT NULL,
    keep_descendants INTEGER NOT NULL DEFAULT 0,
    proc_gone_at INTEGER
  );
  CREATE INDEX runs_task ON runs (task_id, seq);
  CREATE INDEX runs_unreaped ON runs (seq) WHERE proc_gone_at IS NULL;

  CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT,
    run_id TEXT,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX events_task ON events (task_id, id);

  CREATE TABLE comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    author TEXT NOT NULL,
    text TEXT NOT NULL,
    at INTEGER NOT NULL
  );

  CREATE TABLE subscriptions (
    platform TEXT NOT NULL,
    channel TEXT NOT NULL,
    task_id TEXT NOT NULL,
    cursor INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (platform, channel, task_id)
  );

  CREATE TABLE platform_state (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  // 2: a task's columns tied to its status by CHECKs (a running task has a run and a lease,
  // nothing else does; only a ready task waits for a time; a blocked task says why), so no
  // write can leave a done task holding a lease. SQLite adds CHECKs only by rebuilding the
  // table; rows an older version left inconsistent are normalised on the way.
  `
  CREATE TABLE tasks_v2 (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    assignee TEXT,
    status TEXT NOT NULL CHECK (status IN ('todo','ready','running','blocked','done','archived')),
    priority INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    started_at INTEGER,
    completed_at INTEGER,
    max_runtime_seconds REAL,
    max_retries INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_failure_error TEXT,
    result TEXT,
    summary TEXT,
    current_run_id TEXT,
    block_reason TEXT,
    not_before INTEGER,
    origin TEXT NOT NULL,
    lease_expires_at INTEGER,
    last_heartbeat_at INTEGER,
    terminating TEXT,
    CONSTRAINT running_has_run CHECK ((status = 'running') = (current_run_id IS NOT NULL)),
    CONSTRAINT running_has_lease CHECK ((status = 'running') = (lease_expires_at IS NOT NULL)),
    CONSTRAINT lease_only_running CHECK (
      status = 'running' OR (last_heartbeat_at IS NULL AND terminating IS NULL)),
    CONSTRAINT cooldown_only_ready CHECK (status = 'ready' OR not_before IS NULL),
    CONSTRAINT blocked_has_reason CHECK ((status = 'blocked') = (block_reason IS NOT NULL))
  );
  INSERT INTO tasks_v2
  SELECT seq, id, title, body, assignee, st, priority, created_at, updated_at, started_at,
    completed_at, max_runtime_seconds, max_retries, consecutive_failures, last_failure_error,
    result, summary,
    CASE WHEN st = 'running' THEN current_run_id END,
    CASE WHEN st = 'blocked' THEN coalesce(block_reason, 'blocked') END,
    CASE WHEN st = 'ready' THEN not_before END,
    origin,
    CASE WHEN st = 'running' THEN coalesce(lease_expires_at, updated_at) END,
    CASE WHEN st = 'running' THEN last_heartbeat_at END,
    CASE WHEN st = 'running' THEN terminating END
  FROM (SELECT *, CASE WHEN status = 'running' AND current_run_id IS NULL THEN 'ready'
                       ELSE status END AS st FROM tasks);
  DROP TABLE tasks;
  ALTER TABLE tasks_v2 RENAME TO tasks;
  CREATE INDEX tasks_status ON tasks (status, seq);
  CREATE INDEX tasks_assignee ON tasks (assignee, seq);
  CREATE INDEX tasks_dispatch ON tasks (assignee, priority DESC, seq) WHERE status = 'ready';
  `,
  // 3: inbound webhook deliveries remembered for their replay window (by id, and by signature:
  // the signature does not cover the id, so a captured request resent under a new id is caught
  // too); the moment a closed run's group was last proven its own (for its leftovers, after a
  // restart); and retention: a run's
  // folder removed once it is old enough, events found by age.
  `
  CREATE TABLE inbound_deliveries (
    platform TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    signature TEXT NOT NULL,
    task_id TEXT,
    at INTEGER NOT NULL,
    PRIMARY KEY (platform, delivery_id)
  );
  CREATE INDEX inbound_deliveries_signature ON inbound_deliveries (platform, signature);
  CREATE INDEX inbound_deliveries_at ON inbound_deliveries (at);
  ALTER TABLE runs ADD COLUMN files_pruned_at INTEGER;
  ALTER TABLE runs ADD COLUMN group_held_until INTEGER;
  CREATE INDEX runs_prunable ON runs (ended_at) WHERE files_pruned_at IS NULL AND ended_at IS NOT NULL;
  CREATE INDEX events_at ON events (at);
  `,
  // 4: rows an older version left inconsistent, which no move could ever change again. A running
  // task with no open run of its own (reclaim, archive and a forced reclaim all refused it) goes
  // back to ready, with an event saying why; an open run that is not its task's current run is
  // closed as crashed (its processes, if any, are ended by the reaper as any closed run's); a
  // todo task whose every remaining parent is done (a link to a deleted parent was dropped) is
  // promoted.
  // Inbound deliveries are signed with their id (Standard Webhooks): a repeat is the same id,
  // so two deliveries with the same body are two, and the signature needs no index.
  // write_probe: one row that readiness rewrites to learn whether the board can be written again.
  `
  DROP INDEX inbound_deliveries_signature;
  CREATE TABLE write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL);
  INSERT INTO events (task_id, run_id, kind, payload, at)
  SELECT id, current_run_id, 'reclaimed',
    json_object('exitCode', NULL, 'signal', NULL, 'prevPid', NULL, 'failures', consecutive_failures,
      'error', 'normalised by the schema upgrade: its run ' || current_run_id || ' is missing or closed'),
    CAST(strftime('%s', 'now') AS INTEGER) * 1000
  FROM tasks
  WHERE status = 'running'
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = tasks.current_run_id AND r.task_id = tasks.id
                    AND r.ended_at IS NULL);
  UPDATE tasks SET status = 'ready', current_run_id = NULL, lease_expires_at = NULL,
    last_heartbeat_at = NULL, terminating = NULL, not_before = NULL,
    updated_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
  WHERE status = 'running'
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = tasks.current_run_id AND r.task_id = tasks.id
                    AND r.ended_at IS NULL);
  INSERT INTO events (task_id, run_id, kind, payload, at)
  SELECT id, NULL, 'promoted', json_object('after', NULL,
      'reason', 'normalised by the schema upgrade: every parent it still has is done'),
    CAST(strftime('%s', 'now') AS INTEGER) * 1000
  FROM tasks
  WHERE status = 'todo'
    AND NOT EXISTS (SELECT 1 FROM task_parents p JOIN tasks t ON t.id = p.parent_id
                    WHERE p.task_id = tasks.id AND t.status <> 'done');
  UPDATE tasks SET status = 'ready', updated_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
  WHERE status = 'todo'
    AND NOT EXISTS (SELECT 1 FROM task_parents p JOIN tasks t ON t.id = p.parent_id
                    WHERE p.task_id = tasks.id AND t.status <> 'done');
  UPDATE runs SET ended_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000, outcome = 'crashed',
    error = 'closed by the schema upgrade: its task was not running it'
  WHERE ended_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = runs.task_id AND t.status = 'running'
                    AND t.current_run_id = runs.id);
  `,
  // 5: the host that ran each run (cluster.hostName); runs from before it have none.
  `ALTER TABLE runs ADD COLUMN host TEXT;`,
  // 6: the daemons sharing the board, each with its lease; every run names the one that runs it.
  `
  CREATE TABLE hosts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    renewed_at INTEGER NOT NULL,
    lease_expires_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'draining', 'dead')),
    running INTEGER NOT NULL DEFAULT 0 CHECK (running >= 0),
    capacity INTEGER NOT NULL CHECK (capacity >= 0),
    profiles TEXT NOT NULL,
    version TEXT NOT NULL
  );
  ALTER TABLE runs ADD COLUMN host_id INTEGER REFERENCES hosts (id);
  CREATE INDEX runs_open_by_host ON runs (host_id) WHERE ended_at IS NULL;
  `,
  // 7: which host polls each platform when several share the board (PostgreSQL); kept here so
  // both engines have the same tables.
  `
  CREATE TABLE platform_holders (
    platform TEXT PRIMARY KEY,
    host_id INTEGER NOT NULL REFERENCES hosts (id)
  );
  `,
  // 8: runs by when they ended, for the dashboard's throughput over the last hour and day.
  `
  CREATE INDEX runs_ended ON runs (ended_at) WHERE ended_at IS NOT NULL;
  `,
  // 9: Idempotency-Key of the routes that create (docs/api.md): one row per key, with what it was
  // sent to and with, and the answer given, swept with retention after api.idempotencyHours.
  `
  CREATE TABLE idempotency_keys (
    key TEXT PRIMARY KEY,
    route TEXT NOT NULL,
    digest TEXT NOT NULL,
    status INTEGER NOT NULL,
    answer TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX idempotency_keys_at ON idempotency_keys (at);
  `,
  // 10: workspaces (docs/workspaces.md): a task's (JSON of its record), what each run did in it, and the
  // repository a task asked for; and the instructions of a follow-up (docs/workers.md) for its next run.
  `
  ALTER TABLE tasks ADD COLUMN workspace TEXT CHECK (workspace IS NULL OR json_valid(workspace));
  ALTER TABLE runs ADD COLUMN workspace TEXT CHECK (workspace IS NULL OR json_valid(workspace));
  ALTER TABLE tasks ADD COLUMN repo TEXT;
  ALTER TABLE tasks ADD COLUMN instructions TEXT;
  `,
  // 11: agents (docs/agents.md): what each agent run printed of its session and usage, the model a
  // task asked for, and the profiles a rate limit holds until its reset; review (docs/workers.md): a
  // status between running and done, and whether a task asks for it. A CHECK changes only with
  // a rebuild of the table (as in migration 2; foreign keys are off while migrations run).
  `
  ALTER TABLE runs ADD COLUMN agent TEXT CHECK (agent IS NULL OR json_valid(agent));
  CREATE TABLE tasks_v11 (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    assignee TEXT,
    status TEXT NOT NULL
      CHECK (status IN ('todo','ready','running','review','blocked','done','archived')),
    priority INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    started_at INTEGER,
    completed_at INTEGER,
    max_runtime_seconds REAL,
    max_retries INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    last_failure_error TEXT,
    result TEXT,
    summary TEXT,
    current_run_id TEXT,
    block_reason TEXT,
    not_before INTEGER,
    origin TEXT NOT NULL,
    lease_expires_at INTEGER,
    last_heartbeat_at INTEGER,
    terminating TEXT,
    workspace TEXT CHECK (workspace IS NULL OR json_valid(workspace)),
    repo TEXT,
    instructions TEXT,
    model TEXT,
    review INTEGER CHECK (review IS NULL OR review IN (0, 1)),
    CONSTRAINT running_has_run CHECK ((status = 'running') = (current_run_id IS NOT NULL)),
    CONSTRAINT running_has_lease CHECK ((status = 'running') = (lease_expires_at IS NOT NULL)),
    CONSTRAINT lease_only_running CHECK (
      status = 'running' OR (last_heartbeat_at IS NULL AND terminating IS NULL)),
    CONSTRAINT cooldown_only_ready CHECK (status = 'ready' OR not_before IS NULL),
    CONSTRAINT blocked_has_reason CHECK ((status = 'blocked') = (block_reason IS NOT NULL))
  );
  INSERT INTO tasks_v11 (seq, id, title, body, assignee, status, priority, created_at,
    updated_at, started_at, completed_at, max_runtime_seconds, max_retries,
    consecutive_failures, last_failure_error, result, summary, current_run_id, block_reason,
    not_before, origin, lease_expires_at, last_heartbeat_at, terminating, workspace, repo,
    instructions)
  SELECT seq, id, title, body, assignee, status, priority, created_at, updated_at, started_at,
    completed_at, max_runtime_seconds, max_retries, consecutive_failures, last_failure_error,
    result, summary, current_run_id, block_reason, not_before, origin, lease_expires_at,
    last_heartbeat_at, terminating, workspace, repo, instructions
  FROM tasks;
  DROP TABLE tasks;
  ALTER TABLE tasks_v11 RENAME TO tasks;
  CREATE INDEX tasks_status ON tasks (status, seq);
  CREATE INDEX tasks_assignee ON tasks (assignee, seq);
  CREATE INDEX tasks_dispatch ON tasks (assignee, priority DESC, seq) WHERE status = 'ready';
  CREATE TABLE profile_holds (
    profile TEXT PRIMARY KEY,
    until INTEGER NOT NULL,
    reason TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  `,
  // 12: pull requests (docs/pull-requests.md): the task's PR as shown, and how it is followed.
  `
  ALTER TABLE tasks ADD COLUMN pr TEXT CHECK (pr IS NULL OR json_valid(pr));
  ALTER TABLE tasks ADD COLUMN pr_sync TEXT CHECK (pr_sync IS NULL OR json_valid(pr_sync));
  CREATE INDEX tasks_pr_sync ON tasks (seq) WHERE pr_sync IS NOT NULL;
  `,
  // 13: agents that talk back and people who gate them (docs/mcp.md): why a blocked task waits
  // for a person, its agent's open question and last progress, the approval of its first run.
  `
  ALTER TABLE tasks ADD COLUMN block_kind TEXT CHECK (block_kind IS NULL OR block_kind IN ('question'));
  ALTER TABLE tasks ADD COLUMN question TEXT CHECK (question IS NULL OR json_valid(question));
  ALTER TABLE tasks ADD COLUMN progress TEXT CHECK (progress IS NULL OR json_valid(progress));
  ALTER TABLE tasks ADD COLUMN approval TEXT CHECK (approval IS NULL OR json_valid(approval));
  `,
  // 14: schedules (docs/schedules.md): each one's last firing and whether it is paused.
  `
  CREATE TABLE schedules (
    name TEXT PRIMARY KEY,
    last_fire_at INTEGER,
    last_task_id TEXT,
    paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    at INTEGER NOT NULL
  );
  `,
  // 15: budgets (docs/budgets.md): a task's own budget, and "budget" as why a blocked task waits
  // (the column's CHECK is SQLite's to replace only with the column: copied, dropped, renamed).
  `
  ALTER TABLE tasks ADD COLUMN budget TEXT CHECK (budget IS NULL OR json_valid(budget));
  ALTER TABLE tasks ADD COLUMN block_kind_v15 TEXT
    CHECK (block_kind_v15 IS NULL OR block_kind_v15 IN ('question', 'budget'));
  UPDATE tasks SET block_kind_v15 = block_kind;
  ALTER TABLE tasks DROP COLUMN block_kind;
  ALTER TABLE tasks RENAME COLUMN block_kind_v15 TO block_kind;
  `,
  // 16: best of N (docs/attempts.md): an attempt's task, a task's attempts, a judge's result.
  `
  ALTER TABLE tasks ADD COLUMN attempt_of TEXT;
  ALTER TABLE tasks ADD COLUMN attempts TEXT CHECK (attempts IS NULL OR json_valid(attempts));
  ALTER TABLE tasks ADD COLUMN judge TEXT CHECK (judge IS NULL OR json_valid(judge));
  CREATE INDEX tasks_attempt_of ON tasks (attempt_of) WHERE attempt_of IS NOT NULL;
  `,
];
