//! Test runners ([`TEST_RUNNERS`], found behind launchers such as `npx` or `uv run`): a
//! runner that exits non-zero because tests failed has given its verdict on the code, which
//! is an answer; one that could not run (missing, no such script) is a failure.
//!
//! Guarantees: a verdict needs a line that counts or names failed tests; a line saying the
//! runner could not run beats any verdict.

/// Test runners: a program, with the word that makes it run tests when it needs one. A
/// runner that exits non-zero because tests failed has given its verdict on the code — the
/// work the agent is doing — not failed; one that could not run is a failure.
const TEST_RUNNERS: &[(&str, Option<&str>)] = &[
    ("cargo", Some("test")),
    ("cargo", Some("nextest")),
    ("pytest", None),
    ("py.test", None),
    ("tox", None),
    ("nox", None),
    ("npm", Some("test")),
    ("npm", Some("t")),
    ("yarn", Some("test")),
    ("pnpm", Some("test")),
    ("bun", Some("test")),
    ("deno", Some("test")),
    ("jest", None),
    ("vitest", None),
    ("mocha", None),
    ("ava", None),
    ("karma", None),
    ("playwright", Some("test")),
    ("go", Some("test")),
    ("rspec", None),
    ("rake", Some("test")),
    ("phpunit", None),
    ("make", Some("test")),
    ("make", Some("check")),
    ("ctest", None),
    ("dotnet", Some("test")),
    ("mvn", Some("test")),
    ("mvn", Some("verify")),
    ("gradle", Some("test")),
    ("gradlew", Some("test")),
    ("mix", Some("test")),
    ("swift", Some("test")),
    ("flutter", Some("test")),
    ("dart", Some("test")),
];

/// Words that launch a program given after them: `npx jest`, `uv run pytest`,
/// `python -m pytest`, `bundle exec rspec`, `npm run test`.
fn launched(words: &[&str]) -> Option<usize> {
    let first = basename(words.first()?);
    let second = words.get(1).map(|w| w.to_ascii_lowercase());
    let skip = match (first.as_str(), second.as_deref()) {
        ("npx" | "bunx" | "pnpx", _) => 1,
        ("python" | "python3" | "py", Some("-m"))
        | ("uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye", Some("run"))
        | ("bundle" | "pnpm", Some("exec")) => 2,
        ("npm" | "pnpm" | "yarn" | "bun", Some("run" | "run-script")) => {
            // `npm run test` is `npm test`: keep the program, drop `run`.
            return (words.len() > 2 && words[2] == "test").then_some(usize::MAX);
        }
        _ => return None,
    };
    (words.len() > skip).then_some(skip)
}

/// Whether `words` run a test runner (after any launchers).
fn is_test_runner(words: &[&str]) -> bool {
    let mut words: Vec<&str> = words.to_vec();
    for _ in 0..3 {
        match launched(&words) {
            Some(usize::MAX) => {
                words.remove(1);
            }
            Some(n) => {
                words.drain(..n);
            }
            None => break,
        }
    }
    let Some(first) = words.first() else {
        return false;
    };
    let program = basename(first);
    let program = program.strip_suffix(".exe").unwrap_or(&program);
    let program = program.strip_prefix("./").unwrap_or(program);
    let next = words
        .iter()
        .skip(1)
        .find(|w| !w.starts_with('-'))
        .map(|w| w.to_ascii_lowercase());
    TEST_RUNNERS
        .iter()
        .any(|&(p, sub)| p == program && sub.is_none_or(|s| next.as_deref() == Some(s)))
        // A program whose subcommand is `test` runs tests (`hardhat test`, `forge test`,
        // `zig test`): the table lists runners that need no subcommand or another word;
        // the shell's own `test` (`test -f test`) is a condition, not a runner.
        || (next.as_deref() == Some("test") && !matches!(program, "test" | "["))
}

/// A runner that could not run says so: it (or what it runs) is missing, or it has no such
/// script. These beat any verdict (`sh: jest: command not found` then `npm ERR! Test failed`).
const RUNNER_MISSING: &[&str] = &[
    "command not found",
    "is not recognized as",
    "no module named",
    "missing script",
    "no such command",
    "could not find a test runner",
];

/// The exit status of a test runner is its verdict on the code: it ran tests and some
/// failed (`test result: FAILED`, `2 failed, 3 passed`, `3 failing`, `--- FAIL:`,
/// `Tests failed`), and nothing says the runner could not run.
pub(super) fn test_verdict(words: &[&str], code: i64, error: &str) -> bool {
    if matches!(code, 0 | 126 | 127) || !is_test_runner(words) {
        return false;
    }
    let body = crate::record::error_line::body(error).to_ascii_lowercase();
    if RUNNER_MISSING.iter().any(|m| body.contains(m)) {
        return false;
    }
    body.lines().any(|l| {
        let l = l.trim();
        l.contains("test result: failed")
            || l.contains("tests failed")
            || l.starts_with("--- fail:")
            || l.starts_with("fail\t")
            || l.starts_with("failed!")
            // jest's `FAIL src/a.test.js`, go's `FAIL example.com/pkg 0.01s`.
            || l
                .strip_prefix("fail ")
                .is_some_and(|r| r.trim_start().contains(['/', '.']))
            // pytest's short summary: `FAILED tests/test_a.py::test_x - assert 1 == 2`.
            || (l.starts_with("failed ") && l.contains("::"))
            // A test's own assertion failing (the summary may be cut off the stored text).
            || l.ends_with(": assertionerror")
            || counted_failures(l)
    })
}

/// A line counting failed tests: a positive number followed by `failed`, `failing`,
/// `failure(s)` (`2 failed, 3 passed`, `3 failing`, `5 examples, 1 failure`).
fn counted_failures(line: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '|' | '(' | ')' | '='))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).any(|w| {
        w[0].parse::<u64>().is_ok_and(|n| n > 0)
            && ["failed", "failing", "failure", "failures"].contains(&w[1])
    })
}

pub(super) fn basename(word: &str) -> String {
    word.rsplit(['/', '\\'])
        .next()
        .unwrap_or(word)
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::super::tests::bash;
    use super::*;
    use crate::record::classify::Status;

    #[test]
    fn a_test_runners_verdict_is_an_answer() {
        for (cmd, code, text) in [
            (
                "cargo test",
                101,
                "Exit code 101\nrunning 3 tests\ntest a ... FAILED\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored",
            ),
            (
                "cargo test 2>&1 | tail -20",
                101,
                "Exit code 101\ntest result: FAILED. 2 passed; 1 failed",
            ),
            (
                "pytest -q",
                1,
                "Exit code 1\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed, 3 passed in 0.12s",
            ),
            (
                "python -m pytest tests",
                1,
                "Exit code 1\n=== 2 failed, 1 passed in 1.0s ===",
            ),
            ("uv run pytest", 1, "Exit code 1\n=== 1 failed in 0.1s ==="),
            ("npm test", 1, "Exit code 1\n  3 passing\n  2 failing"),
            (
                "npm run test",
                1,
                "Exit code 1\nTests:       1 failed, 2 passed, 3 total",
            ),
            ("yarn test", 1, "Exit code 1\nFAIL src/a.test.js\n  ● adds"),
            (
                "pnpm test",
                1,
                "Exit code 1\n Tests  1 failed | 4 passed (5)",
            ),
            (
                "npx jest src",
                1,
                "Exit code 1\nTests:       4 failed, 4 total",
            ),
            ("npx vitest run", 1, "Exit code 1\n Tests  2 failed (2)"),
            ("mocha", 2, "Exit code 2\n  2 failing"),
            (
                "go test ./...",
                1,
                "Exit code 1\n--- FAIL: TestAdd (0.00s)\nFAIL\texample.com/m\t0.01s",
            ),
            ("bundle exec rspec", 1, "Exit code 1\n5 examples, 1 failure"),
            ("make test", 2, "Exit code 2\nSome tests failed."),
            (
                "dotnet test",
                1,
                "Exit code 1\nFailed!  - Failed:     1, Passed:     2",
            ),
            ("cd web && npm test", 1, "Exit code 1\n  1 failing"),
            // Any program's `test` subcommand, launched or not.
            (
                "npx hardhat test test/a.test.js 2>&1",
                3,
                "Exit code 3\n  2 passing\n  3 failing",
            ),
            (
                "forge test -vv",
                1,
                "Exit code 1\nSuite result: FAILED. 1 passed; 2 failed",
            ),
        ] {
            assert_eq!(bash(cmd, code, text), Status::Answer, "{cmd}: {text}");
        }
    }

    #[test]
    fn a_test_subcommand_makes_a_runner_and_the_test_builtin_does_not() {
        for (words, runner) in [
            (&["hardhat", "test"][..], true),
            (&["npx", "hardhat", "test", "--network", "x"][..], true),
            (&["forge", "test"][..], true),
            (&["hardhat", "compile"][..], false),
            (&["test", "-f", "test"][..], false),
            (&["[", "test", "]"][..], false),
            (&["git", "status"][..], false),
        ] {
            assert_eq!(is_test_runner(words), runner, "{words:?}");
        }
    }

    #[test]
    fn a_test_runner_that_could_not_run_is_a_failure() {
        for (cmd, code, text) in [
            (
                "pytest",
                127,
                "Exit code 127\n/bin/bash: pytest: command not found",
            ),
            (
                "python -m pytest",
                1,
                "Exit code 1\n/usr/bin/python: No module named pytest",
            ),
            (
                "npm test",
                1,
                "Exit code 1\nnpm ERR! Missing script: \"test\"",
            ),
            (
                "npm test",
                1,
                "Exit code 1\nsh: jest: command not found\nnpm ERR! Test failed.  See above for more details.",
            ),
            (
                "cargo nextest run",
                101,
                "Exit code 101\nerror: no such command: `nextest`",
            ),
            (
                "jest",
                1,
                "Exit code 1\n'jest' is not recognized as an internal or external command",
            ),
            // No verdict: it did not get as far as running tests.
            (
                "cargo test",
                101,
                "Exit code 101\nerror[E0425]: cannot find value `x`\nerror: could not compile `m`",
            ),
            (
                "cargo test",
                101,
                "Exit code 101\nfailed to run custom build command for `openssl-sys`",
            ),
            (
                "pytest tests/nope.py",
                4,
                "Exit code 4\nERROR: file or directory not found: tests/nope.py",
            ),
            // Not a runner, or not running tests.
            ("cargo build", 101, "Exit code 101\n1 failed"),
            ("npm install", 1, "Exit code 1\n2 failed"),
            ("make", 2, "Exit code 2\n2 failed"),
        ] {
            assert_eq!(bash(cmd, code, text), Status::Failure, "{cmd}: {text}");
        }
    }

    #[test]
    fn test_runners_are_found_behind_their_launchers() {
        for words in [
            vec!["pytest"],
            vec!["/usr/bin/pytest", "-q"],
            vec!["npx", "jest"],
            vec!["bunx", "vitest"],
            vec!["python3", "-m", "pytest"],
            vec!["poetry", "run", "pytest"],
            vec!["pnpm", "exec", "vitest"],
            vec!["bundle", "exec", "rspec"],
            vec!["npm", "run", "test"],
            vec!["npm", "test"],
            vec!["make", "-j4", "test"],
            vec!["./gradlew", "test"],
            vec!["dotnet.exe", "test"],
            vec!["uv", "run", "python", "-m", "pytest"],
        ] {
            assert!(is_test_runner(&words), "{words:?}");
        }
        for words in [
            vec!["npm", "run", "build"],
            vec!["npm", "install"],
            vec!["python", "-m", "pip"],
            vec!["npx"],
            vec!["cargo", "build"],
            vec!["make"],
            vec![],
        ] {
            assert!(!is_test_runner(&words), "{words:?}");
        }
        assert!(counted_failures("tests: 1 failed, 2 passed"));
        assert!(!counted_failures("0 failed, 2 passed"));
        assert!(!counted_failures("failed 2"));
        assert!(!test_verdict(&["pytest"], 0, "1 failed"));
        assert!(!test_verdict(&["pytest"], 126, "1 failed"));
    }
}
