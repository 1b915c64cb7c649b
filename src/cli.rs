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
#[command(
    after_help = "Examples:\n  # wire this repository, prove it fires\n  callus install --project && callus doctor\n  # backfill from ~/.claude, ~/.codex, ~/.gemini\n  callus record import\n  # candidate rules from recurring failures\n  callus derive --since 30d\n  callus completions bash > ~/.local/share/bash-completion/completions/callus"
)]
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
    #[command(
        after_help = "Examples:\n  callus guard < event.json       # decide one PreToolUse event, as the host runs it\n  callus guard test -- rm -rf ~   # what the guard would decide, and why\n  callus guard check              # validate every active rule layer"
    )]
    Guard(GuardArgs),
    /// Hook recorder (no subcommand): store one hook event read from stdin; always exits 0
    ///
    /// With a subcommand: import history or show what has been recorded.
    #[command(
        after_help = "Examples:\n  callus record < event.json       # store one hook event, as the host runs it\n  callus record import             # backfill from the hosts' history\n  callus record stats --since 7d   # what failed this week"
    )]
    Record(RecordArgs),
    /// Cluster recorded failures into candidate rules, with their evidence
    #[command(
        after_help = "Examples:\n  callus derive --since 30d                                    # candidates from a month of failures\n  callus derive --since 2026-11-01 --until 2026-12-01 --json   # one month, as JSON\n  callus derive --keep-anecdotal --min-count 2                 # also the thinly evidenced ones"
    )]
    Derive(DeriveArgs),
    /// List, show and promote rules
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  # every active rule, its layer, action and tier\n  callus rules list\n  # the built-in policy\n  callus rules show starter\n  callus rules promote bash-psql-3f9c2a1b --action nudge --message \"Pass -h and -d\""
    )]
    Rules(RulesCommand),
    /// The evidence funnel and the before/after effect of every promoted rule
    #[command(
        after_help = "Examples:\n  callus report                                                # the whole recorded period\n  callus report --since 90d --html report.html                 # a self-contained page\n  callus report --db postgres://me@db.internal/callus --json   # the team's evidence"
    )]
    Report(ReportArgs),
    /// Declare the files a run may write, then verify what it actually wrote
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  # before the run\n  callus scope declare --run-id R --modify 'src/**' --forbid '.env*'\n  # after it: 0 allow/warn, 2 violation\n  callus scope verify --run-id R"
    )]
    Scope(ScopeCommand),
    /// Wire callus's hooks into Claude Code, Codex, Gemini CLI, Cursor or Copilot CLI
    #[command(
        after_help = "Examples:\n  callus install --project                     # this repository's .claude/settings.json\n  callus install --codex --user                # Codex's hooks.json, with its trust entries\n  callus install --gemini --cursor --dry-run   # show the change, write nothing"
    )]
    Install(InstallArgs),
    /// Remove exactly the hooks `callus install` added
    ///
    /// Other hooks and settings are left as they were.
    #[command(
        mut_arg("claude", |a| a.help("Unwire Claude Code (default when no host is named)")),
        mut_arg("codex", |a| a.help("Unwire Codex (`$CODEX_HOME/hooks.json`)")),
        mut_arg("gemini", |a| a.help("Unwire Gemini CLI")),
        mut_arg("cursor", |a| a.help("Unwire Cursor")),
        mut_arg("copilot", |a| a.help("Unwire GitHub Copilot CLI")),
        mut_arg("project", |a| a.help("Remove the hooks from the project's settings (in the repo root)")),
        mut_arg("user", |a| a.help("Remove the hooks from the user's settings (`~/.claude/settings.json`)")),
        mut_arg("dry_run", |a| a.help("Print the removal as a diff and change nothing")),
    )]
    #[command(
        after_help = "Examples:\n  callus uninstall --project           # what `install --project` added, nothing else\n  callus uninstall --codex --dry-run   # show the removal, change nothing"
    )]
    Uninstall(InstallArgs),
    /// Check that callus is installed, wired, firing and healthy
    #[command(
        after_help = "Examples:\n  callus doctor          # binary, wiring, firing, rulesets, store, audit chain\n  callus doctor --json   # the same checks for a script"
    )]
    Doctor(DoctorArgs),
    /// Manage sessions halted by a RECUSE signal
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  callus session resume 0b6f7c1e-5d2a-4c8e-9f3b-2a1d4e6c8b90   # lift a RECUSE halt"
    )]
    Session(SessionCommand),
    /// Share evidence with the team through a `PostgreSQL` database
    ///
    /// `sync push` uploads this machine's store; `derive`, `guard prune`, `report` and
    /// `record stats` then read everyone's with `--db postgres://…`.
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  callus sync push --db postgres://me@db.internal/callus   # password from ~/.pgpass\n  callus derive --db postgres://me@db.internal/callus      # then derive from everyone's"
    )]
    Sync(SyncCommand),
    /// Play a bundled trace through record, derive, guard, audit and prune in a temp home
    #[command(
        after_help = "Examples:\n  callus demo          # the whole loop in a temporary home\n  callus demo --keep   # and keep the home to look around"
    )]
    Demo(DemoArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell
    ///
    /// The script is generated from this very command line, so it always matches the
    /// installed version.
    #[command(
        after_help = "Examples:\n  callus completions bash > ~/.local/share/bash-completion/completions/callus\n  callus completions zsh > \"${fpath[1]}/_callus\"\n  callus completions fish > ~/.config/fish/completions/callus.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory
    #[command(
        after_help = "Examples:\n  callus man | man -l -                      # read it now\n  callus man --dir ~/.local/share/man/man1   # install every page for `man callus-guard-check`"
    )]
    Man(ManArgs),
    /// Let one refused call through, once: a person at a terminal, by the code the refusal
    /// printed
    ///
    /// The code is bound to that command, that project and that tool, and expires 10 minutes
    /// after the refusal; the approval lasts 10 minutes and one call. Refused without a
    /// terminal or inside an agent's tool call. The grant and its use are audited.
    #[command(
        after_help = "Examples:\n  callus allow-once K7QX2M          # the code a refusal printed, typed at your terminal\n  callus allow-once K7QX2M --json"
    )]
    AllowOnce(AllowOnceArgs),
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
    /// With no FILE, checks every active layer. With --history, replays the rulesets over the
    /// recorded calls of a window instead, as the guard would have decided them (conditions
    /// included), and shows per rule how many calls it would have fired on, failed and
    /// succeeded.
    #[command(
        after_help = "Examples:\n  callus guard check                      # every active layer\n  callus guard check .callus/rules.json   # one file: every error, with its line\n  callus guard check --json               # for CI\n  callus guard check --history            # the active layers over the last 30 days\n  callus guard check rules.json --history 7d --json   # one file over a week, call by call"
    )]
    Check(CheckArgs),
    /// Explain what the guard would decide for one tool call
    ///
    /// Example: callus guard test -- git push --force origin main
    #[command(
        after_help = "Examples:\n  callus guard test -- git push --force origin main\n  # a Write of .env\n  callus guard test --tool Write --field file_path -- .env\n  callus guard test --cwd ~/src/app --json -- psql -c 'DROP TABLE users'"
    )]
    Test(TestArgs),
    /// Lifecycle verdicts for every active rule, from firings and measured outcomes
    #[command(
        after_help = "Examples:\n  callus guard prune                                         # verdicts from the last 30 days\n  callus guard prune --days 90 --json\n  callus guard prune --db postgres://me@db.internal/callus   # from the team's firings"
    )]
    Prune(PruneArgs),
    /// Verify, tail or export the audit hash chain
    #[command(subcommand)]
    #[command(
        after_help = "Examples:\n  callus guard audit verify      # is the chain intact?\n  callus guard audit tail -n 5   # the newest records"
    )]
    Audit(AuditCommand),
}

/// `callus guard check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Ruleset files to check (default: every active layer).
    pub files: Vec<PathBuf>,
    /// Replay the rulesets over the calls recorded in this window (a duration like `7d` or a
    /// date `YYYY-MM-DD`; default `30d`): per rule, the calls it would have fired on, failed
    /// and succeeded, with examples; with --json, every call's decision. A condition history
    /// cannot answer does not hold; the output counts those calls. Put FILEs before it.
    #[arg(long, value_name = "WINDOW", num_args = 0..=1, default_missing_value = "30d")]
    pub history: Option<String>,
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
    #[command(
        after_help = "Examples:\n  # against every anchor written\n  callus guard audit verify\n  callus guard audit verify --anchor ~/callus-anchors.jsonl --json\n  # against the team store\n  callus guard audit verify --anchor postgres://me@db.internal/callus"
    )]
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
        /// The origin whose chain a team-store anchor holds (default `user@hostname`); with
        /// `--db`, the one origin to verify (default: every origin).
        #[arg(long, value_name = "NAME")]
        origin: Option<String>,
        /// Verify the chains held in the team store at URL (`postgres://…`) instead of the
        /// local one: each origin's chain, walked there, and checked against its push anchors.
        #[arg(long, value_name = "URL", conflicts_with_all = ["anchor", "expect_head"])]
        db: Option<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Append the chain's head to FILE or git notes, outside `$CALLUS_HOME`, for later
    /// verifications
    #[command(
        after_help = "Examples:\n  callus guard audit anchor --to ~/callus-anchors.jsonl   # e.g. daily, from cron\n  callus guard audit anchor --to git:                     # a git note on HEAD (refs/notes/callus-audit)"
    )]
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
    #[command(
        after_help = "Examples:\n  callus guard audit tail                 # the newest 20 records\n  callus guard audit tail -n 100 --json"
    )]
    Tail {
        /// How many records.
        #[arg(short = 'n', default_value_t = 20)]
        n: usize,
        /// Print the records as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the whole chain to stdout
    #[command(after_help = "Examples:\n  callus guard audit export --jsonl > audit.jsonl")]
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
    #[command(
        after_help = "Examples:\n  callus record import                              # where the hosts keep history (~/.claude, ~/.codex, ~/.gemini)\n  callus record import ~/.claude/projects --json\n  callus record import trace.jsonl --format trace   # a callusguard trace"
    )]
    Import(ImportArgs),
    /// Calls, failures and failure rates per tool and command shape
    #[command(
        after_help = "Examples:\n  callus record stats                                         # everything recorded\n  callus record stats --since 7d --json\n  callus record stats --db postgres://me@db.internal/callus   # the team's"
    )]
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
    /// GitHub Copilot CLI session log (`~/.copilot/session-state/*/events.jsonl`).
    Copilot,
    /// callusguard JSONL trace (`ts, tool_name, tool_input, status, error`).
    Trace,
}

/// `callus record import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// Files or directories to import (default: where the hosts keep their history:
    /// `~/.claude/projects`, `$CLAUDE_CONFIG_DIR/projects`, `$CODEX_HOME/sessions` or
    /// `~/.codex/sessions`, `~/.gemini/tmp`).
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
    #[command(
        after_help = "Examples:\n  callus derive explain bash-psql-3f9c2a1b          # an id from `callus derive`\n  callus derive explain bash-psql-3f9c2a1b --json"
    )]
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
        /// The candidate file it was written to with `derive --out FILE` (its window and
        /// tool exclusions are read from there).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// Subcommands of `callus rules`.
#[derive(Debug, Subcommand)]
pub(crate) enum RulesCommand {
    /// Every active rule with its layer, action, tier and last firing
    #[command(after_help = "Examples:\n  callus rules list\n  callus rules list --json")]
    List {
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a ruleset: `starter` (the built-in set) or a layer file path
    #[command(
        after_help = "Examples:\n  callus rules show starter          # the built-in policy\n  callus rules show project --json   # this repository's layer as JSON"
    )]
    Show {
        /// `starter`, `user`, `project`, `candidates`, or a path.
        which: String,
        /// Print as JSON (the ruleset document).
        #[arg(long)]
        json: bool,
    },
    /// Promote a candidate into a reviewed ruleset, refusing an action above its ceiling
    #[command(
        after_help = "Examples:\n  callus rules promote bash-psql-3f9c2a1b --action nudge --message \"Pass -h and -d\"\n  callus rules promote bash-psql-3f9c2a1b --action deny --message M --into ~/.callus/rules.json"
    )]
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
    #[command(
        after_help = "Examples:\n  callus scope declare --run-id R --create 'docs/**/*.md' --modify src/lib.rs\n  callus scope declare --run-id R --forbid '.claude/**' --check lint='cargo clippy'"
    )]
    Declare(ScopeDeclareArgs),
    /// Compare the declaration with what changed (exit 0 allow/warn, 2 violation, 3 bad input)
    #[command(
        after_help = "Examples:\n  callus scope verify --run-id R          # 0 allow/warn, 2 violation, 3 bad input\n  callus scope verify --run-id R --json"
    )]
    Verify {
        /// The run id given to `declare`.
        #[arg(long)]
        run_id: String,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a run's declaration and last verdict
    #[command(after_help = "Examples:\n  callus scope show R   # the declaration and last verdict")]
    Show {
        /// The run id.
        run_id: String,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Hook mode: `PreToolUse` refuses undeclared writes, Stop refuses to finish on a violation
    #[command(
        after_help = "Examples:\n  callus scope hook < event.json   # as the host runs it (PreToolUse or Stop)"
    )]
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
    #[command(
        after_help = "Examples:\n  callus session resume 0b6f7c1e-5d2a-4c8e-9f3b-2a1d4e6c8b90"
    )]
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
    /// Creates the `callus` schema if it is missing (an older one is refused: `sync init`
    /// upgrades it), claims the origin for the pushing `PostgreSQL` role (another role's
    /// origin is refused), then upserts every local row in one transaction: pushing twice
    /// adds nothing, a row that changed here (a pending call that failed) is updated there,
    /// and an interrupted push commits nothing. Only what the local store holds is sent, already redacted.
    /// Talks to `PostgreSQL` through `psql`, so every libpq convention works (`~/.pgpass`,
    /// `PGPASSWORD`, `sslmode=…` in the URL); a password in the URL is handed to `psql` in
    /// its environment, never on its command line.
    #[command(
        after_help = "Examples:\n  # password from ~/.pgpass\n  callus sync push --db postgres://me@db.internal/callus\n  CALLUS_SYNC_DB=postgres://me@db.internal/callus callus sync push --json"
    )]
    Push(SyncPushArgs),
    /// Create the team schema, or upgrade it to this callus's version
    ///
    /// Applies the missing migrations (`migrations/postgres/`) in one transaction; run it as
    /// the role that owns the schema. `--grant ROLE` also lets ROLE (a member's role, or a
    /// group role the members belong to) read the team store and push its own origins.
    #[command(
        after_help = "Examples:\n  # as the schema's owner, once and after each upgrade\n  callus sync init --db postgres://owner@db.internal/callus --grant callus_team"
    )]
    Init(SyncInitArgs),
    /// What this machine has pushed and has pending, and the team's origins with their audit
    /// anchors
    #[command(
        after_help = "Examples:\n  callus sync status --db postgres://me@db.internal/callus          # pushed, pending, origins\n  callus sync status --db postgres://me@db.internal/callus --json"
    )]
    Status(SyncStatusArgs),
}

/// The team database argument every `sync` command takes.
#[derive(Debug, Args)]
pub(crate) struct TeamDb {
    /// The team database, a `postgres://` or `postgresql://` URL.
    #[arg(
        long,
        value_name = "URL",
        env = "CALLUS_SYNC_DB",
        hide_env_values = true
    )]
    pub db: String,
}

/// `callus sync init`.
#[derive(Debug, Args)]
pub(crate) struct SyncInitArgs {
    #[command(flatten)]
    pub team: TeamDb,
    /// Grant ROLE what a pushing member needs (repeatable).
    #[arg(long, value_name = "ROLE")]
    pub grant: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `callus sync status`.
#[derive(Debug, Args)]
pub(crate) struct SyncStatusArgs {
    #[command(flatten)]
    pub team: TeamDb,
    /// This machine's origin (default `user@hostname`).
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// Print the status as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `callus sync push`.
#[derive(Debug, Args)]
pub(crate) struct SyncPushArgs {
    #[command(flatten)]
    pub team: TeamDb,
    /// Who is pushing: tags every row, and keeps each origin's audit chain whole (default
    /// `user@hostname`; keep it stable, or the same rows arrive again under a new name).
    #[arg(long, value_name = "NAME")]
    pub origin: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Report progress on stderr even when it is not a terminal.
    #[arg(long)]
    pub progress: bool,
}

/// `callus demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Keep the temporary home and print its path.
    #[arg(long)]
    pub keep: bool,
}

/// `callus completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `callus man [--dir DIR]`.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write `callus.1` and one page per subcommand (`callus-guard-check.1`, …) into DIR
    /// instead of printing `callus.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `callus allow-once`.
#[derive(Debug, Args)]
pub(crate) struct AllowOnceArgs {
    /// The code the refusal printed (case and dashes do not matter).
    pub code: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}
