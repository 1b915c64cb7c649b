//! Every clap type of callus, in one place so the whole command surface can be reviewed at
//! once. Doc comments here are the `--help` text. Nothing in this module does any work: the
//! stages receive these structs from `app::run`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Turn the tool failures coding agents keep repeating into reviewed guardrails.
///
/// callus records every tool call Claude Code or Codex makes, finds the failures that recur,
/// grades each by how often that kind of call fails, lets you promote the worthwhile ones into
/// a reviewed ruleset whose action is capped by that evidence, enforces the ruleset before
/// every tool call, and reports the rules that no longer earn their place.
#[derive(Debug, Parser)]
#[command(name = "callus", version, about, long_about, max_term_width = 100)]
pub(crate) struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The top-level commands, one per pipeline stage.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// `PreToolUse` hook (no subcommand): decide one tool call read from stdin
    ///
    /// With a subcommand: check, test, prune or audit the rules.
    Guard(GuardArgs),
    /// Hook recorder (no subcommand): store one hook event read from stdin; always exits 0
    ///
    /// With a subcommand: import history or show what has been recorded.
    Record(RecordArgs),
    /// Cluster recorded failures into candidate rules, with their evidence
    Derive(DeriveArgs),
    /// List, show and promote rules
    #[command(subcommand)]
    Rules(RulesCommand),
    /// The evidence funnel and the before/after effect of every promoted rule
    Report(ReportArgs),
    /// Declare the files a run may write, then verify what it actually wrote
    #[command(subcommand)]
    Scope(ScopeCommand),
    /// Wire callus's hooks into Claude Code, Codex, Gemini CLI, Cursor or Copilot CLI
    Install(InstallArgs),
    /// Remove exactly the hooks `callus install` added
    Uninstall(InstallArgs),
    /// Check that callus is installed, wired, firing and healthy
    Doctor(DoctorArgs),
    /// Manage sessions halted by a RECUSE signal
    #[command(subcommand)]
    Session(SessionCommand),
    /// Share evidence with the team through a `PostgreSQL` database
    ///
    /// `sync push` uploads this machine's store; `derive`, `guard prune`, `report` and
    /// `record stats` then read everyone's with `--db postgres://…`.
    #[command(subcommand)]
    Sync(SyncCommand),
    /// Play a bundled trace through record, derive, guard, audit and prune in a temp home
    Demo(DemoArgs),
}

/// `callus guard [SUBCOMMAND]`.
#[derive(Debug, Args)]
pub(crate) struct GuardArgs {
    /// What to do; without one, act as the `PreToolUse` hook.
    #[command(subcommand)]
    pub command: Option<GuardCommand>,
}

/// Subcommands of `callus guard`.
#[derive(Debug, Subcommand)]
pub(crate) enum GuardCommand {
    /// Validate rulesets: schema, regexes, tier ceilings and examples (exit 0 good, 1 bad)
    ///
    /// With no FILE, checks every active layer.
    Check(CheckArgs),
    /// Explain what the guard would decide for one tool call
    ///
    /// Example: callus guard test -- git push --force origin main
    Test(TestArgs),
    /// Lifecycle verdicts for every active rule, from firings and measured outcomes
    Prune(PruneArgs),
    /// Verify, tail or export the audit hash chain
    #[command(subcommand)]
    Audit(AuditCommand),
}

/// `callus guard check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Ruleset files to check (default: every active layer).
    pub files: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `callus guard test`.
#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    /// Tool name of the simulated call.
    #[arg(long, default_value = "Bash")]
    pub tool: String,
    /// Field of `tool_input` the value goes into.
    #[arg(long, default_value = "command")]
    pub field: String,
    /// Working directory of the simulated call (selects the project layer).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Print the explanation as JSON.
    #[arg(long)]
    pub json: bool,
    /// The command (or field value); several words are joined with spaces.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// `callus guard prune`.
#[derive(Debug, Args)]
pub(crate) struct PruneArgs {
    /// Window of days to count firings in.
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the evidence from DB instead of the local store: a `postgres://` URL (the team's
    /// shared store, filled by `callus sync push`) or the path of an `SQLite` store.
    #[arg(long, value_name = "DB")]
    pub db: Option<String>,
}

/// Subcommands of `callus guard audit`.
#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Walk the chain and check it against its anchors; exit 0 if intact or unanchored
    /// (said so), 1 naming the first bad record
    Verify {
        /// Also require the record SEQ to carry HASH (an anchor kept elsewhere).
        #[arg(long, value_name = "SEQ:HASH")]
        expect_head: Option<String>,
        /// Check against the anchors in FILE, in the git notes REF of the current
        /// directory's repository (`git:REF`, `git:` for `refs/notes/callus-audit`), or
        /// against the chain a team store holds for this origin (`postgres://…`, password
        /// from `PGPASSWORD`/`~/.pgpass`); repeatable; default: every place `anchor` wrote.
        #[arg(long, value_name = "FILE|git:REF|URL")]
        anchor: Vec<String>,
        /// The origin whose chain a team-store anchor holds (default `user@hostname`).
        #[arg(long, value_name = "NAME")]
        origin: Option<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Append the chain's head to FILE or git notes, outside `$CALLUS_HOME`, for later
    /// verifications
    Anchor {
        /// Where: an anchor file (appended to; created 0600), or `git:REF` for the git notes
        /// REF (`git:` alone: `refs/notes/callus-audit`) on `HEAD` of the current
        /// directory's repository. The team store anchors by `callus sync push`.
        #[arg(long, value_name = "FILE|git:REF")]
        to: String,
        /// Print the anchor as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show the newest records
    Tail {
        /// How many records.
        #[arg(short = 'n', default_value_t = 20)]
        n: usize,
        /// Print the records as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the whole chain to stdout
    Export {
        /// One JSON record per line (the only format for now).
        #[arg(long, required = true)]
        jsonl: bool,
    },
}

/// `callus record [SUBCOMMAND]`.
#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
    /// What to do; without one, act as the hook recorder.
    #[command(subcommand)]
    pub command: Option<RecordCommand>,
}

/// Subcommands of `callus record`.
#[derive(Debug, Subcommand)]
pub(crate) enum RecordCommand {
    /// Backfill from Claude Code transcripts, Codex rollouts or callusguard JSONL traces
    ///
    /// Paths may be files or directories (searched recursively). Importing the same files
    /// twice adds nothing.
    Import(ImportArgs),
    /// Calls, failures and failure rates per tool and command shape
    Stats(StatsArgs),
}

/// Input formats `record import` understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImportFormat {
    /// Detect from each file's content.
    Auto,
    /// Claude Code session transcript (`~/.claude/projects/**/*.jsonl`).
    Claude,
    /// Codex rollout file (`~/.codex/sessions/**/rollout-*.jsonl`).
    Codex,
    /// Gemini CLI session log (`~/.gemini/tmp/*/chats/session-*.jsonl`).
    Gemini,
    /// callusguard JSONL trace (`ts, tool_name, tool_input, status, error`).
    Trace,
}

/// `callus record import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Files or directories to import.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Force the input format instead of detecting it.
    #[arg(long, value_enum, default_value_t = ImportFormat::Auto)]
    pub format: ImportFormat,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `callus record stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// Only calls since this point: a duration like `7d`/`12h` or a date `YYYY-MM-DD`.
    #[arg(long)]
    pub since: Option<String>,
    /// Print the statistics as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the evidence from DB instead of the local store: a `postgres://` URL (the team's
    /// shared store, filled by `callus sync push`) or the path of an `SQLite` store.
    #[arg(long, value_name = "DB")]
    pub db: Option<String>,
}

/// `callus derive [explain ID]`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct DeriveArgs {
    /// Look at one candidate instead of deriving.
    #[command(subcommand)]
    pub command: Option<DeriveCommand>,
    /// Start of the window: a duration like `7d` or a date `YYYY-MM-DD` (inclusive).
    #[arg(long, default_value = "7d")]
    pub since: String,
    /// End of the window: a date `YYYY-MM-DD` (exclusive; default now).
    #[arg(long)]
    pub until: Option<String>,
    /// Fewest failures a cluster needs.
    #[arg(long, default_value_t = 3)]
    pub min_count: u64,
    /// Fewest attempts for a tier better than anecdotal.
    #[arg(long, default_value_t = 5)]
    pub min_attempts: u64,
    /// Keep clusters with too few attempts instead of withholding them.
    #[arg(long)]
    pub keep_anecdotal: bool,
    /// Leave out a tool (repeatable; adds to the default exclusions).
    #[arg(long = "exclude-tool", value_name = "TOOL")]
    pub exclude_tool: Vec<String>,
    /// Include a tool the defaults exclude (repeatable).
    #[arg(long = "include-tool", value_name = "TOOL")]
    pub include_tool: Vec<String>,
    /// Print the candidate document as JSON instead of merging it.
    #[arg(long)]
    pub json: bool,
    /// Write the candidate document to FILE instead of `$CALLUS_HOME/candidates.json`.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Read the evidence from DB instead of the local store: a `postgres://` URL (the team's
    /// shared store, filled by `callus sync push`) or the path of an `SQLite` store.
    #[arg(long, value_name = "DB")]
    pub db: Option<String>,
}

/// Subcommands of `callus derive`.
#[derive(Debug, Subcommand)]
pub(crate) enum DeriveCommand {
    /// Show the cluster, contrast and backtest behind one candidate
    Explain {
        /// The candidate id.
        id: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
        /// Explain from DB's evidence: a `postgres://` URL (the team's store) or an `SQLite`
        /// store path — the store the candidate was derived from.
        #[arg(long, value_name = "DB")]
        db: Option<String>,
    },
}

/// Subcommands of `callus rules`.
#[derive(Debug, Subcommand)]
pub(crate) enum RulesCommand {
    /// Every active rule with its layer, action, tier and last firing
    List {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a ruleset: `starter` (the built-in set) or a layer file path
    Show {
        /// `starter`, `user`, `project`, `candidates`, or a path.
        which: String,
        /// Print as JSON (the ruleset document).
        #[arg(long)]
        json: bool,
    },
    /// Promote a candidate into a reviewed ruleset, refusing an action above its ceiling
    Promote(PromoteArgs),
}

/// The graded outcome of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ActionArg {
    /// Audit only.
    Monitor,
    /// Tell the model, let the call run.
    Nudge,
    /// Refuse the call, tell the model why.
    Deny,
    /// Refuse the call with exit 2.
    Block,
}

/// `callus rules promote`.
#[derive(Debug, Args)]
pub(crate) struct PromoteArgs {
    /// The candidate id (from `callus derive`).
    pub id: String,
    /// The action to enforce (capped by the candidate's evidence tier).
    #[arg(long, value_enum)]
    pub action: ActionArg,
    /// The message the agent sees: what to do instead.
    #[arg(long)]
    pub message: String,
    /// Replace the candidate's patterns (repeatable); the backtest is re-run.
    #[arg(long = "pattern", value_name = "RE")]
    pub pattern: Vec<String>,
    /// Replace the candidate's `unless` patterns (repeatable); the backtest is re-run.
    #[arg(long = "unless", value_name = "RE")]
    pub unless: Vec<String>,
    /// Ruleset to write into (default `<repo root>/.callus/rules.json`).
    #[arg(long, value_name = "FILE")]
    pub into: Option<PathBuf>,
}

/// `callus report`.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// Start of the period: a duration like `90d` or a date `YYYY-MM-DD`.
    #[arg(long)]
    pub since: Option<String>,
    /// End of the period (exclusive): a date `YYYY-MM-DD`.
    #[arg(long)]
    pub until: Option<String>,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "html")]
    pub json: bool,
    /// Write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Read the evidence from DB instead of the local store: a `postgres://` URL (the team's
    /// shared store, filled by `callus sync push`) or the path of an `SQLite` store.
    #[arg(long, value_name = "DB")]
    pub db: Option<String>,
}

/// Subcommands of `callus scope`.
#[derive(Debug, Subcommand)]
pub(crate) enum ScopeCommand {
    /// Declare what a run may create, modify and delete, and take the baseline
    Declare(ScopeDeclareArgs),
    /// Compare the declaration with what changed (exit 0 allow/warn, 2 violation, 3 bad input)
    Verify {
        /// The run id given to `declare`.
        #[arg(long)]
        run_id: String,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a run's declaration and last verdict
    Show {
        /// The run id.
        run_id: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Hook mode: `PreToolUse` refuses undeclared writes, Stop refuses to finish on a violation
    Hook,
}

/// `callus scope declare`.
#[derive(Debug, Args)]
pub(crate) struct ScopeDeclareArgs {
    /// An id naming this run.
    #[arg(long)]
    pub run_id: String,
    /// The project root (default: the current directory); stored absolute.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Glob of files the run may create (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub create: Vec<String>,
    /// Glob of files the run may modify (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub modify: Vec<String>,
    /// Glob of files the run may delete (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub delete: Vec<String>,
    /// Glob of files the run must never touch (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub forbid: Vec<String>,
    /// A project check, `NAME=CMD` (repeatable); run now and at verify.
    #[arg(long, value_name = "NAME=CMD")]
    pub check: Vec<String>,
    /// Read the declaration JSON from FILE instead.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
}

/// Which hosts `install`/`uninstall` act on, and where.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// Wire Claude Code (default when no host is named).
    #[arg(long)]
    pub claude: bool,
    /// Wire Codex (`$CODEX_HOME/hooks.json`).
    #[arg(long)]
    pub codex: bool,
    /// Wire Gemini CLI (`~/.gemini/settings.json`; project: `.gemini/settings.json`).
    #[arg(long)]
    pub gemini: bool,
    /// Wire Cursor (`~/.cursor/hooks.json`; project: `.cursor/hooks.json`).
    #[arg(long)]
    pub cursor: bool,
    /// Wire GitHub Copilot CLI (`~/.copilot/hooks/callus.json`; project:
    /// `.github/hooks/callus.json`).
    #[arg(long)]
    pub copilot: bool,
    /// Write the project's settings (`.claude/settings.json` in the repo root).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Write the user's settings (`~/.claude/settings.json`).
    #[arg(long)]
    pub user: bool,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `callus doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Subcommands of `callus session`.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionCommand {
    /// Lift a RECUSE halt so the session's tool calls are decided normally again
    Resume {
        /// The session id.
        id: String,
    },
}

/// Subcommands of `callus sync`.
#[derive(Debug, Subcommand)]
pub(crate) enum SyncCommand {
    /// Upload this machine's sessions, tool calls and audit records to the team database
    ///
    /// Creates the `callus` schema if it is missing, then upserts every local row in one
    /// transaction: pushing twice adds nothing, a row that changed here (a pending call that
    /// failed) is updated there. Only what the local store holds is sent, already redacted.
    /// Talks to `PostgreSQL` through `psql`, so every libpq convention works (`~/.pgpass`,
    /// `PGPASSWORD`, `sslmode=…` in the URL); a password in the URL is handed to `psql` in
    /// its environment, never on its command line.
    Push(SyncPushArgs),
}

/// `callus sync push`.
#[derive(Debug, Args)]
pub(crate) struct SyncPushArgs {
    /// The team database, a `postgres://` or `postgresql://` URL.
    #[arg(
        long,
        value_name = "URL",
        env = "CALLUS_SYNC_DB",
        hide_env_values = true
    )]
    pub db: String,
    /// Who is pushing: tags every row, and keeps each origin's audit chain whole (default
    /// `user@hostname`; keep it stable, or the same rows arrive again under a new name).
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `callus demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Keep the temporary home and print its path.
    #[arg(long)]
    pub keep: bool,
}
