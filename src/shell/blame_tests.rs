//! Blame by kind: each case is (command, error, blamed segment text, why).

use super::*;
use crate::shell::split;

/// The blamed segment's text and why, or `None`.
fn blamed(cmd: &str, err: &str) -> Option<(String, &'static str)> {
    let s = split(cmd);
    let b = blame(&s.segments, err)?;
    Some((b.text().to_string(), b.why.as_str()))
}

fn check(cases: &[(&str, &str, &str, &str)]) {
    for (cmd, err, text, why) in cases {
        let got = blamed(cmd, err);
        assert_eq!(
            got.as_ref().map(|(t, w)| (t.as_str(), *w)),
            Some((*text, *why)),
            "{cmd:?} / {err:?}"
        );
    }
}

#[test]
fn a_prog_prefix_names_the_segment() {
    check(&[
        (
            "cd db && psql -c 'select 1' | head -5",
            "psql: error: connection refused",
            "psql -c 'select 1'",
            "named-by-error",
        ),
        (
            "ls a; cat b.txt | wc -l",
            "Exit code 1\ncat: b.txt: No such file or directory",
            "cat b.txt",
            "named-by-error",
        ),
        // A path-spelled program: its basename.
        (
            "make && ./bin/run.sh --fast",
            "./bin/run.sh: line 3: cd: nope: No such file or directory",
            "run.sh --fast",
            "named-by-error",
        ),
        // git's own `fatal:` line.
        // git's `error:` lines, not any `error:`.
        (
            "git push origin main && cargo build",
            "error: failed to push some refs to 'origin'",
            "git push origin main",
            "named-by-error",
        ),
        (
            "git pull && cargo build",
            "error: could not find `Cargo.toml` in `/w`",
            "cargo build",
            "mentioned",
        ),
        (
            "git fetch origin && git rebase origin/main | tail -3",
            "fatal: invalid upstream 'origin/main'",
            "git rebase origin/main",
            "named-by-error",
        ),
        (
            "npm install && npm test && ls",
            "npm ERR! install failed: E404",
            "npm install",
            "named-by-error",
        ),
        (
            "cargo build 2>&1 | grep -v warning",
            "error[E0425]: cannot find value `x`",
            "cargo build",
            "named-by-error",
        ),
        (
            "cd app; python3 manage.py migrate | tail -20",
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'a'",
            "python3 manage.py migrate",
            "named-by-error",
        ),
        // A consumer that complains itself is blamed.
        (
            "git log --oneline | grep -E '(fix'",
            "grep: Unmatched ( or \\(",
            "grep -E (fix",
            "named-by-error",
        ),
    ]);
}

#[test]
fn command_not_found_blames_the_missing_program_wherever_it_is() {
    check(&[
        (
            "cat data.json | jqq .items | head",
            "bash: line 1: jqq: command not found",
            "jqq .items",
            "not-found",
        ),
        (
            "cd x && gemini -p hi",
            "Exit code 127\n/bin/bash: gemini: command not found",
            "gemini -p hi",
            "not-found",
        ),
        (
            "ls; rgg foo src | wc -l",
            "zsh: command not found: rgg",
            "rgg foo src",
            "not-found",
        ),
        (
            "echo x | sh -c 'tsc --noEmit'",
            "sh: 1: tsc: not found",
            "tsc --noEmit",
            "not-found",
        ),
        (
            "Get-ChildItem | Select-Object -First 3; Invoke-Foo -X 1",
            "Invoke-Foo : The term 'Invoke-Foo' is not recognized as the name of a cmdlet",
            "Invoke-Foo -X 1",
            "not-found",
        ),
        (
            "dir && pwsh -NoProfile",
            "'pwsh' is not recognized as an internal or external command,",
            "pwsh -NoProfile",
            "not-found",
        ),
        // The missing name is not a segment (inside a script): the script that said so.
        (
            "./setup.sh && make",
            "./setup.sh: line 2: $'\\r': command not found",
            "setup.sh",
            "named-by-error",
        ),
    ]);
}

#[test]
fn powershell_names_its_cmdlet() {
    check(&[
        (
            "Get-Content missing.txt | Select-Object -First 10",
            "Get-Content : Cannot find path 'C:\\w\\missing.txt' because it does not exist.",
            "Get-Content missing.txt",
            "named-by-error",
        ),
        (
            "Get-Item x | Format-List",
            "Get-Item: Cannot find path 'x' because it does not exist.",
            "Get-Item x",
            "named-by-error",
        ),
        // No name: the stage before the consumers.
        (
            "Get-Process node | Where-Object { $_.CPU -gt 1 } | Sort-Object CPU | Select-Object -First 3",
            "Exit code 1",
            "Get-Process node",
            "producer",
        ),
    ]);
}

#[test]
fn ssh_errors_go_to_ssh_or_the_program_that_spawned_it() {
    check(&[
        (
            "git ls-remote git@github.com:o/r.git | grep main",
            "ssh: connect to host github.com port 22: Connection refused",
            "git ls-remote git@github.com:o/r.git",
            "spawned",
        ),
        (
            "scp a.txt host:/tmp/ && echo ok",
            "ssh: Could not resolve hostname host: Name or service not known",
            "scp a.txt host:/tmp/",
            "spawned",
        ),
        // A segment runs ssh itself: that one.
        (
            "git pull; ssh -T git@github.com",
            "ssh: connect to host github.com port 22: Operation timed out",
            "ssh -T git@github.com",
            "named-by-error",
        ),
    ]);
    // Nothing spawns ssh: the error names no segment, the exit status decides.
    assert_eq!(
        blamed("curl -s x | head", "ssh: oops").unwrap().1,
        "producer"
    );
}

#[test]
fn wrappers_speak_through_what_they_run_unless_named() {
    check(&[
        (
            "timeout 90 expect -f deploy.exp | tail -5",
            "Command timed out after 2m 0s",
            "expect -f deploy.exp",
            "producer",
        ),
        (
            "sudo apt-get install -y foo",
            "Exit code 100",
            "apt-get install -y foo",
            "wrapped",
        ),
        (
            "sudo apt-get install -y foo",
            "sudo: a terminal is required to read the password",
            "sudo apt-get install -y foo",
            "wrapper-named",
        ),
        (
            "timeout 5 frobnicate --x",
            "timeout: failed to run command 'frobnicate': No such file or directory",
            "timeout 5 frobnicate --x",
            "wrapper-named",
        ),
        (
            "find . -name '*.py' | xargs pylint",
            "Exit code 123",
            "pylint",
            "wrapped",
        ),
        (
            "find . -name '*.py' | xargs pylint",
            "xargs: pylint: terminated by signal 13",
            "xargs pylint",
            "wrapper-named",
        ),
        (
            "bash -c 'cd src && make check'",
            "Exit code 2",
            "make check",
            "wrapped",
        ),
        (
            "nice -n 10 env A=1 make test",
            "Exit code 2",
            "make test",
            "exit-status",
        ),
    ]);
}

#[test]
fn consumers_are_never_the_culprit() {
    check(&[
        (
            "npm test 2>&1 | tail -20",
            "Exit code 1",
            "npm test",
            "producer",
        ),
        (
            "cargo test | grep -v Compiling | head -n 40",
            "Exit code 101",
            "cargo test",
            "producer",
        ),
        (
            "curl -s api | jq -r '.items[]' | sort | uniq -c | wc -l",
            "",
            "curl -s api",
            "producer",
        ),
        (
            "make 2>&1 | tee build.log",
            "Exit code 2",
            "make",
            "producer",
        ),
        ("ps aux | awk '{print $2}' | cat", "", "ps aux", "producer"),
        (
            "dmesg | sed -n '1,5p' | cut -d: -f1",
            "",
            "dmesg",
            "producer",
        ),
        (
            "kubectl get pods | rg -i crash",
            "",
            "kubectl get pods",
            "producer",
        ),
    ]);
}

#[test]
fn a_consumer_with_a_file_operand_is_a_producer() {
    check(&[
        // After `&&`, not piped: grep reads its file.
        (
            "make && grep error build.log",
            "Exit code 1",
            "grep error build.log",
            "exit-status",
        ),
        // Piped, but reading its own files: not a consumer.
        (
            "ls | grep -e x notes.txt",
            "",
            "grep -e x notes.txt",
            "exit-status",
        ),
        (
            "ls | grep x notes.txt",
            "",
            "grep x notes.txt",
            "exit-status",
        ),
        (
            "ls | head -n 3 file.txt",
            "",
            "head -n 3 file.txt",
            "exit-status",
        ),
        ("ls | jq . data.json", "", "jq . data.json", "exit-status"),
        (
            "ls | sed -e s/a/b/ f.txt",
            "",
            "sed -e s/a/b/ f.txt",
            "exit-status",
        ),
        // A pattern given by option: the only operand is a file.
        ("ls | grep -e x", "", "ls", "producer"),
        ("ls | awk -f prog.awk", "", "ls", "producer"),
    ]);
}

#[test]
fn powershell_filters_builtin_producers_and_doers() {
    check(&[
        (
            "Get-ChildItem | Select-String -Path a.txt -Pattern x",
            "",
            "Select-String -Path a.txt -Pattern x",
            "exit-status",
        ),
        (
            "Get-ChildItem | Select-String x a.txt",
            "",
            "Select-String x a.txt",
            "exit-status",
        ),
        (
            "Get-ChildItem | Select-String x",
            "",
            "Get-ChildItem",
            "producer",
        ),
        // A builtin producer: the consumer is all there is.
        ("echo '{}' | jq .a", "", "jq .a", "exit-status"),
        // `tr`'s operands are sets, `tee`'s outputs: always consumers.
        (
            "cat a b | tr a-z A-Z | tee out.txt",
            "",
            "cat a b",
            "producer",
        ),
        // Not a filter: an unknown program reading a pipe is a doer.
        ("cat x.sql | psql db", "", "psql db", "exit-status"),
        ("curl -s x | sudo tee /etc/x", "", "curl -s x", "producer"),
    ]);
}

#[test]
fn a_filter_s_option_values_are_not_its_file_operands() {
    check(&[
        ("ls | wc -l notes.txt", "", "wc -l notes.txt", "exit-status"),
        (
            "ls | cat -n notes.txt",
            "",
            "cat -n notes.txt",
            "exit-status",
        ),
        ("ls | uniq -f 1 a.txt", "", "uniq -f 1 a.txt", "exit-status"),
        (
            "ls | tail --lines 3 a.log",
            "",
            "tail --lines 3 a.log",
            "exit-status",
        ),
        ("ls | tail --lines 3", "", "ls", "producer"),
        ("ls | tail --lines=3 -- -", "", "ls", "producer"),
        ("ls | jq --arg a b .x", "", "ls", "producer"),
        (
            "ls | jq --arg a b .x f.json",
            "",
            "jq --arg a b .x f.json",
            "exit-status",
        ),
        ("ls | grep -- -v", "", "ls", "producer"),
        ("ls | grep -- -v f", "", "grep -- -v f", "exit-status"),
        (
            "ls | grep --regexp=x f",
            "",
            "grep --regexp=x f",
            "exit-status",
        ),
        ("ls | grep --regexp=x", "", "ls", "producer"),
    ]);
}

#[test]
fn a_shell_killed_by_its_own_pkill_blames_pkill() {
    check(&[
        (
            "pkill -f 'node server.js'; sleep 1; node server.js &",
            "Exit code 143",
            "pkill -f 'node server.js'",
            "killed-own-shell",
        ),
        (
            "sleep 1; pkill -f vite || true; npm run dev",
            "Error: Exit code 144",
            "pkill -f vite",
            "killed-own-shell",
        ),
        (
            "cd web && pkill -9 -f uvicorn && uvicorn app:app",
            "Exit code 1",
            "pkill -9 -f uvicorn",
            "killed-own-shell",
        ),
        (
            "killall node; npm start | tail",
            "Exit code 137",
            "killall node",
            "killed-own-shell",
        ),
    ]);
    // `pkill` by name (no -f) with an ordinary exit status: not the culprit.
    assert_eq!(
        blamed("pkill node; npm start", "Exit code 1").unwrap().0,
        "npm start"
    );
    // A success (no error text) of a `pkill -f` is shaped by what ran last.
    assert_eq!(
        blamed("pkill -f vite; npm run dev", "").unwrap().0,
        "npm run dev"
    );
    // `pkill` by pattern needs `-f`/`--full`; `-9` is not it.
    assert_eq!(
        blamed("pkill -9 node; npm start", "Exit code 1").unwrap().0,
        "npm start"
    );
    assert_eq!(
        blamed("pkill --full node; npm start", "Exit code 1")
            .unwrap()
            .1,
        "killed-own-shell"
    );
    // A named program still wins.
    assert_eq!(
        blamed("pkill -f x; psql -c 1", "psql: error: no")
            .unwrap()
            .1,
        "named-by-error"
    );
}

#[test]
fn mentions_are_weak_and_never_a_consumer() {
    check(&[
        (
            "cd x && make build; ./run",
            "the run failed",
            "run",
            "mentioned",
        ),
        // `make` inside `cmake` is no mention.
        ("make build; ./run", "cmake failed", "run", "exit-status"),
        // `head` is a word in the error, but head only consumed.
        (
            "git log | head -3",
            "Exit code 1\nsomething about head",
            "git log",
            "producer",
        ),
    ]);
}

#[test]
fn builtins_are_never_blamed() {
    assert_eq!(blamed("cd /nope", "cd: no such file"), None);
    assert_eq!(blamed("export A=1; set -e; sleep 2; echo hi", ""), None);
    check(&[
        (
            "make test && echo done",
            "Exit code 2",
            "make test",
            "exit-status",
        ),
        (
            "cd \"$(git rev-parse --show-toplevel)\"",
            "",
            "git rev-parse --show-toplevel",
            "exit-status",
        ),
        (
            "while ! pg_isready -h db; do sleep 1; done",
            "",
            "pg_isready -h db",
            "exit-status",
        ),
    ]);
}

#[test]
fn signals_and_labels() {
    assert!(signal_exit("Exit code 143"));
    assert!(signal_exit("exit code: 129\n"));
    assert!(signal_exit("Exit code 159"));
    assert!(!signal_exit("Exit code 128"));
    assert!(!signal_exit("Exit code 160"));
    assert!(!signal_exit("Exit code 1"));
    assert!(signal_exit("x\nKilled\n"));
    assert_eq!(prefix_name("Get-Item : x").as_deref(), Some("Get-Item"));
    assert_eq!(prefix_name("foo bar: x"), None);
    assert_eq!(prefix_name("note : x"), None);
    assert_eq!(prefix_name("12: x"), None);
    assert_eq!(prefix_name("/opt/bin/tool.exe: x").as_deref(), Some("tool"));
}
