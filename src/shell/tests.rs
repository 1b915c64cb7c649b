//! Table-driven unit tests for the splitter: segment texts, adversarial spellings of one
//! dangerous command, benign near misses, problems, loops, heredocs, redirections, depth,
//! origins, shape and quoting.

use super::syntax::quote::quote;
use super::*;

fn texts(cmd: &str) -> Vec<String> {
    split(cmd).segments.into_iter().map(|s| s.text).collect()
}

fn seg<'a>(s: &'a Split, text: &str) -> &'a Segment {
    s.segments
        .iter()
        .find(|g| g.text == text)
        .unwrap_or_else(|| panic!("no segment {text:?} in {s:#?}"))
}

/// Commands that must split completely into exactly these segment texts, in this order.
const CASES: &[(&str, &[&str])] = &[
    // operators and newlines
    ("ls", &["ls"]),
    ("", &[]),
    ("   \n\n ", &[]),
    (
        "a && b || c; d | e |& f & g",
        &["a", "b", "c", "d", "e", "f", "g"],
    ),
    ("a&&b||c;d|e", &["a", "b", "c", "d", "e"]),
    ("a\nb\n\nc", &["a", "b", "c"]),
    ("a &\nb", &["a", "b"]),
    ("a \\\n  && b", &["a", "b"]),
    ("a &&\n b", &["a", "b"]),
    ("echo a\\;b 'c|d' \"e&&f\"", &["echo a;b c|d e&&f"]),
    ("echo a # rm -rf /", &["echo a"]),
    ("echo a#b", &["echo a#b"]),
    ("a;#c\nb", &["a", "b"]),
    ("ls\r\nsudo ls", &["ls", "sudo ls", "ls"]),
    // quoting
    ("echo 'a b' \"c d\" e\\ f", &["echo 'a b' 'c d' 'e f'"]),
    ("echo \"it's\"", &["echo it's"]),
    ("echo \"it's here\"", &["echo 'it'\\''s here'"]),
    ("echo \"a\\\"b\\$c\\\\d\\e\"", &["echo a\"b$c\\d\\e"]),
    (
        "echo $'a\\tb\\x41\\101\\u00e9\\'q'",
        &["echo 'a\tbAAé'\\''q'"],
    ),
    ("echo $'ab\\0cd'", &["echo ab"]),
    ("echo $\"hello\"", &["echo hello"]),
    ("echo \"\" ''", &["echo '' ''"]),
    (
        "echo ${x:-'a b'} ${#y} ${z/a/b}",
        &["echo '${x:-'\\''a b'\\''}' ${#y} ${z/a/b}"],
    ),
    ("echo \"${a}\"x", &["echo ${a}x"]),
    // normalisation
    ("FOO=1 BAR=\"a b\" A+=x b[1]=2 ls -l", &["ls -l"]),
    ("FOO=1", &[]),
    ("/usr/local/bin/git status", &["git status"]),
    ("./bin/psql -h h", &["psql -h h"]),
    ("r\"\"m -rf x", &["rm -rf x"]),
    ("'r'm x", &["rm x"]),
    ("\\rm x", &["rm x"]),
    ("rm${IFS}-rf${IFS}x", &["rm -rf x"]),
    ("rm$IFS-rf$IFS'x'", &["rm -rf x"]),
    ("${IFS}rm x", &["rm x"]),
    ("echo \"a${IFS}b\" $IFSX", &["echo a${IFS}b $IFSX"]),
    ("{rm,-rf,x}", &["rm -rf x"]),
    ("'{rm,-rf,x}'", &["{rm,-rf,x}"]),
    ("$'\\x72\\x6d' -rf x", &["rm -rf x"]),
    // transparent wrappers
    ("env -i -u HOME PATH=/bin rm x", &["rm x"]),
    ("env -S 'rm -rf x'", &["rm -rf x"]),
    ("env --split-string='-i rm x'", &["rm x"]),
    ("env", &["env"]),
    ("timeout 5 rm x", &["rm x"]),
    ("timeout -s KILL -k 1 5s rm x", &["rm x"]),
    ("timeout --signal=KILL 5 rm x", &["rm x"]),
    ("timeout 5", &["timeout 5"]),
    ("nice -n 10 rm x", &["rm x"]),
    ("nice -10 rm x", &["rm x"]),
    ("ionice -c 3 rm x", &["rm x"]),
    ("nohup rm x &", &["rm x"]),
    ("time rm x", &["rm x"]),
    ("time -p rm x", &["rm x"]),
    ("command rm x", &["rm x"]),
    ("command -p rm x", &["rm x"]),
    ("command -v rm", &["command -v rm"]),
    ("exec rm x", &["rm x"]),
    ("exec -a name rm x", &["rm x"]),
    ("exec 3>&1", &["exec"]),
    ("builtin cd x", &["cd x"]),
    ("stdbuf -oL rm x", &["rm x"]),
    ("stdbuf -o L rm x", &["rm x"]),
    ("setsid -f rm x", &["rm x"]),
    ("busybox rm x", &["rm x"]),
    ("nohup env A=1 timeout 5 nice rm x", &["rm x"]),
    // meaningful wrappers: the wrapper, then what it runs
    ("sudo rm x", &["sudo rm x", "rm x"]),
    (
        "/usr/bin/sudo -u root -- /bin/rm x",
        &["sudo -u root -- /bin/rm x", "rm x"],
    ),
    ("sudo -E env X=1 rm x", &["sudo -E env X=1 rm x", "rm x"]),
    ("sudo -l", &["sudo -l"]),
    ("sudo -e /etc/hosts", &["sudo -e /etc/hosts"]),
    ("sudo -i", &["sudo -i"]),
    ("sudo -s <<EOF\na\nEOF", &["sudo -s", "a"]),
    ("su - root <<< a", &["su - root", "a"]),
    ("doas -u root rm x", &["doas -u root rm x", "rm x"]),
    (
        "pkexec --user root rm x",
        &["pkexec --user root rm x", "rm x"],
    ),
    ("xargs -0 -n 1 rm", &["xargs -0 -n 1 rm", "rm"]),
    ("xargs -I{} rm {}", &["xargs -I{} rm {}", "rm {}"]),
    ("xargs", &["xargs"]),
    ("find . -name '*.o' -delete", &["find . -name *.o -delete"]),
    (
        "find . -execdir rm {} + -ok mv {} y \\;",
        &["find . -execdir rm {} + -ok mv {} y ;", "rm {}", "mv {} y"],
    ),
    ("watch -x rm x", &["watch -x rm x", "rm x"]),
    // script runners
    ("bash -c 'a; b'", &["bash -c 'a; b'", "a", "b"]),
    (
        "bash -euo pipefail -c 'a'",
        &["bash -euo pipefail -c a", "a"],
    ),
    ("sh -lc a", &["sh -lc a", "a"]),
    ("zsh script.sh", &["zsh script.sh"]),
    ("fish --command='a'", &["fish --command=a", "a"]),
    ("eval a b", &["eval a b", "a b"]),
    ("eval", &["eval"]),
    ("su -c 'a' root", &["su -c a root", "a"]),
    ("su - root", &["su - root"]),
    ("watch -n 1 'a | b'", &["watch -n 1 'a | b'", "a", "b"]),
    ("echo 'a; b' | sh", &["echo 'a; b'", "sh", "a", "b"]),
    (
        "printf 'a\\nb\\n' | bash -s",
        &["printf a\\nb\\n", "bash -s", "a", "b"],
    ),
    ("echo a | sh script.sh", &["echo a", "sh script.sh"]),
    ("echo a |\n\n sh", &["echo a", "sh", "a"]),
    ("echo a; sh", &["echo a", "sh"]),
    ("bash <<< 'a'", &["bash", "a"]),
    // substitutions (before the command that uses them)
    (
        "echo $(a) `b` <(c) >(d)",
        &["a", "b", "c", "d", "echo $(a) `b` <(c) >(d)"],
    ),
    ("echo \"x $(a \"b\") y\"", &["a b", "echo 'x $(a \"b\") y'"]),
    ("x=$(a) y", &["a", "y"]),
    ("x=$(a)", &["a"]),
    ("echo $(a $(b))", &["b", "a $(b)", "echo '$(a $(b))'"]),
    ("echo `a \\`b\\``", &["b", "a `b`", "echo '`a \\`b\\``'"]),
    ("echo ${x:-$(a)}", &["a", "echo ${x:-$(a)}"]),
    ("echo $((1 + $(a)))", &["a", "echo '$((1 + $(a)))'"]),
    ("echo $( (a) )", &["a", "echo '$( (a) )'"]),
    (
        "echo $(case x in y) a;; esac)",
        &["a", "echo '$(case x in y) a;; esac)'"],
    ),
    ("arr=(a $(b) c) d", &["b", "d"]),
    ("cat > >(tee log)", &["tee log", "cat"]),
    // compound commands
    ("(a; b) && { c; d; }", &["a", "b", "c", "d"]),
    ("( (a) )", &["a"]),
    ("((cd x); ls)", &["cd x", "ls"]),
    (
        "echo $((cd x); ls)",
        &["cd x", "ls", "echo '$((cd x); ls)'"],
    ),
    ("((a))", &[]),
    ("((i++)) && b", &["b"]),
    (
        "if a; then b; elif c; then d; else e; fi",
        &["a", "b", "c", "d", "e"],
    ),
    ("if ! a; then b; fi", &["a", "b"]),
    ("for f in *; do rm \"$f\"; done", &["rm $f"]),
    ("for f in $(ls); do a; done", &["ls", "a"]),
    ("for f; do a; done", &["a"]),
    ("for f\ndo a\ndone", &["a"]),
    ("for ((i=0; i<3; i++)); do a $i; done", &["a $i"]),
    ("select x in a b; do c; done", &["c"]),
    ("while true; do sleep 1; done", &["true", "sleep 1"]),
    ("until a; do b; done", &["a", "b"]),
    (
        "case $x in a|b) c;; (d) e ;& *) f;;& esac",
        &["c", "e", "f"],
    ),
    ("case $x in\n  a) b\n  ;;\nesac", &["b"]),
    ("case $x in a) b; esac", &["b"]),
    ("case $x in esac", &[]),
    ("case $(a) in b) ;; esac", &["a"]),
    ("f() { a; }; f", &["a", "f"]),
    ("function f { a; }", &["a"]),
    ("function f() ( a )", &["a"]),
    (":(){ :|:& };:", &[":", ":", ":"]),
    (
        "[[ -f x && $y == 'a b' ]] || c",
        &["[[ -f x && $y == 'a b' ]]", "c"],
    ),
    ("[[ a < b ]]", &["[[ a < b ]]"]),
    ("[ -f x ] && a", &["[ -f x ]", "a"]),
    ("time { a; }", &["a"]),
    ("coproc a", &["a"]),
    ("echo if then fi", &["echo if then fi"]),
    ("'if' x", &["if x"]),
    // redirections
    ("a > f 2>&1 < g", &["a"]),
    ("a 2>/dev/null >>log &>all", &["a"]),
    ("> f", &[""]),
    ("(a) > f", &["a", ""]),
    ("echo {fd}>x", &["echo"]),
];

#[test]
fn table_of_segment_texts() {
    let mut failures = Vec::new();
    for (cmd, want) in CASES {
        let s = split(cmd);
        let got: Vec<&str> = s.segments.iter().map(|g| g.text.as_str()).collect();
        if got != *want || !s.complete {
            failures.push(format!(
                "{cmd:?}\n  want {want:?}\n  got  {got:?} ({:?})",
                s.problem
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Spellings that all run `rm -rf /`: some segment must have exactly that argv.
const DANGEROUS: &[&str] = &[
    "rm -rf /",
    "FOO=1 sudo rm -rf /",
    "r\"\"m -rf /",
    "\\rm -rf /",
    "/bin/rm -rf /",
    "'rm' -rf /",
    "rm${IFS}-rf${IFS}/",
    "{rm,-rf,/}",
    "$'\\162\\155' -rf /",
    "bash -c 'rm -rf /'",
    "sh -c \"cd /tmp && rm -rf /\"",
    "bash -c \"bash -c \\\"rm -rf /\\\"\"",
    "eval \"rm -rf /\"",
    "eval rm -rf /",
    "echo / | xargs rm -rf /",
    "find . -exec rm -rf / \\;",
    "find . -exec sh -c 'rm -rf /' \\;",
    "env -i PATH=/bin rm -rf /",
    "env -S 'rm -rf /'",
    "timeout 5 rm -rf /",
    "nice -n 5 rm -rf /",
    "nohup rm -rf / &",
    "command rm -rf /",
    "exec rm -rf /",
    "time rm -rf /",
    "stdbuf -oL rm -rf /",
    "sudo -u root rm -rf /",
    "doas rm -rf /",
    "$(rm -rf /)",
    "echo $(rm -rf /)",
    "echo \"$(rm -rf /)\"",
    "echo `rm -rf /`",
    "cat <(rm -rf /)",
    "cd /tmp && rm -rf /",
    "true; rm -rf /",
    "false || rm -rf /",
    "ls | rm -rf /",
    "(rm -rf /)",
    "{ rm -rf /; }",
    "if true; then rm -rf /; fi",
    "while true; do rm -rf /; done",
    "for i in 1; do rm -rf /; done",
    "case x in x) rm -rf /;; esac",
    "f() { rm -rf /; }",
    "bash <<EOF\nrm -rf /\nEOF",
    "sh <<-'EOF'\n\trm -rf /\n\tEOF",
    "cat <<EOF\n$(rm -rf /)\nEOF",
    "bash <<< 'rm -rf /'",
    "echo 'rm -rf /' | sh",
    "printf 'rm -rf /' | bash",
    "cat <<'EOF' | sh\nrm -rf /\nEOF",
    "su -c 'rm -rf /'",
    "watch 'rm -rf /'",
    "sudo bash -c 'rm -rf /'",
    "x=$(rm -rf /)",
    "echo ${x:-$(rm -rf /)}",
    "[[ $(rm -rf /) ]]",
    "for f in $(rm -rf /); do :; done",
    "echo hi > >(rm -rf /)",
];

#[test]
fn dangerous_spellings_all_expose_the_command() {
    let want = ["rm", "-rf", "/"];
    let misses: Vec<_> = DANGEROUS
        .iter()
        .filter(|cmd| {
            let s = split(cmd);
            !s.complete
                || !s
                    .segments
                    .iter()
                    .any(|g| g.argv == want && g.text == "rm -rf /")
        })
        .map(|cmd| format!("{cmd:?} → {:#?}", split(cmd)))
        .collect();
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// Near misses: no segment may start with the word `rm` (what a `^rm\b` rule looks for).
const BENIGN: &[&str] = &[
    "echo \"rm -rf /\"",
    "echo 'rm -rf /'",
    "echo rm -rf /",
    "git commit -m \"rm -rf fix\"",
    "git commit -m 'rm -rf /; sudo x'",
    "grep -r 'rm -rf' .",
    "grep -r sudo .",
    "cat <<EOF\nrm -rf /\nEOF",
    "cat <<'EOF'\n$(rm -rf /)\nEOF",
    "python3 - <<'PY'\nrm -rf /\nPY",
    "psql <<SQL\nrm -rf /\nSQL",
    "echo '$(rm -rf /)'",
    "echo '`rm -rf /`'",
    "ls # rm -rf /",
    "bash script.sh 'rm -rf /'",
    "echo 'rm -rf /' > notes.txt",
    "command -v rm",
    "sudo -l rm",
    "echo $'rm -rf /'",
];

#[test]
fn benign_near_misses_do_not_start_with_rm() {
    let hits: Vec<_> = BENIGN
        .iter()
        .filter(|cmd| {
            split(cmd)
                .segments
                .iter()
                .any(|g| g.text == "rm" || g.text.starts_with("rm "))
        })
        .map(|cmd| format!("{cmd:?} → {:#?}", split(cmd)))
        .collect();
    assert!(hits.is_empty(), "{}", hits.join("\n"));
}

/// Inputs that cannot be fully parsed, with the start of the reason.
const PROBLEMS: &[(&str, &str)] = &[
    ("echo 'abc", "unterminated single quote"),
    ("echo \"abc", "unterminated double quote"),
    ("echo $'abc", "unterminated $'"),
    ("echo `abc", "unterminated backquote"),
    ("echo $(abc", "unterminated $("),
    ("echo <(abc", "unterminated process substitution"),
    ("echo ${abc", "unterminated ${"),
    ("echo $((1", "unterminated (("),
    ("cat <<EOF\nabc", "unterminated heredoc"),
    ("cat <<EOF", "unterminated heredoc"),
    ("cat <<", "redirection without a target"),
    ("echo >", "redirection without a target"),
    ("a &&", "command ends with `&&`"),
    ("a |", "command ends with `|`"),
    ("&& a", "empty command before `&&`"),
    ("; a", "empty command before `;`"),
    ("a;;b", "unexpected `;;`"),
    ("a )", "unexpected `)`"),
    ("(a", "unclosed ("),
    ("{ a; ", "unclosed {"),
    ("{ a }", "unclosed {"),
    ("if a; then b", "unclosed if"),
    ("while a; do b", "unclosed loop"),
    ("case x in a) b;;", "incomplete compound command"),
    ("case x in a) b", "unclosed case"),
    ("echo \\$(a)", "unexpected `(`"),
    ("fi", "unexpected `fi`"),
    ("done", "unexpected `done`"),
    ("then a", "unexpected `then`"),
    ("do a", "unexpected `do`"),
    ("for x in a b", "incomplete compound command"),
    ("[[ a", "unclosed [["),
    ("(a) b", "unexpected word after a compound command"),
    ("echo (a)", "unexpected `(`"),
    ("bash -c 'echo \"x'", "unterminated double quote"),
    ("env -S 'a\"b' x", "unterminated double quote"),
];

#[test]
fn problems_are_reported_and_segments_kept() {
    let mut failures = Vec::new();
    for (cmd, want) in PROBLEMS {
        let s = split(cmd);
        let ok = !s.complete && s.problem.as_deref().is_some_and(|p| p.starts_with(want));
        if !ok {
            failures.push(format!(
                "{cmd:?}: want {want:?}, got complete={} {:?}",
                s.complete, s.problem
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // What was parsed before the problem is still there.
    let s = split("cd /tmp && rm -rf / && echo 'oops");
    assert!(!s.complete);
    assert!(s.segments.iter().any(|g| g.text == "rm -rf /"));
}

#[test]
fn nesting_is_bounded() {
    let deep = format!("{}rm -rf /{}", "$(".repeat(40), ")".repeat(40));
    let s = split(&deep);
    assert!(!s.complete);
    assert_eq!(s.problem.as_deref(), Some("nesting deeper than 16 levels"));
    assert!(s.segments.iter().all(|g| g.depth <= MAX_DEPTH));

    let ok = format!("{}rm -rf /{}", "$(".repeat(16), ")".repeat(16));
    let s = split(&ok);
    assert!(s.complete, "{:?}", s.problem);
    assert_eq!(seg(&s, "rm -rf /").depth, 16);

    // Script nesting: each `bash -c "…"` level doubles the escaping, so 17 levels is the
    // most a real command could hold; eval and sudo chains nest without growing.
    let mut script = "rm -rf /".to_owned();
    for _ in 0..17 {
        let mut escaped = String::new();
        for c in script.chars() {
            if "\\\"$`".contains(c) {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        script = format!("bash -c \"{escaped}\"");
    }
    for deep in [
        script,
        format!("{}rm -rf /", "eval ".repeat(40)),
        format!("{}rm -rf /", "sudo ".repeat(40)),
    ] {
        let s = split(&deep);
        assert_eq!(s.problem.as_deref(), Some("nesting deeper than 16 levels"));
        assert_eq!(s.segments.iter().map(|g| g.depth).max(), Some(MAX_DEPTH));
    }

    // Arithmetic-or-subshell is decided by a flat scan: nesting never re-lexes (was 2^n).
    let arith = format!("{}x{}", "$((".repeat(60), ") ".repeat(120));
    let t = std::time::Instant::now();
    let _ = split(&arith);
    assert!(t.elapsed().as_secs() < 2);

    for hostile in [
        "(".repeat(100_000),
        "{ ".repeat(50_000),
        "\"$(".repeat(10_000),
        "${".repeat(50_000),
    ] {
        let s = split(&hostile);
        assert!(!s.complete);
    }
    let s = split(&"nohup ".repeat(1000));
    assert!(!s.complete);
}

#[test]
fn loops_are_recorded() {
    let s = split("while ! curl -s localhost:8080; do sleep 2; done; echo up");
    let cond = LoopCtx {
        kind: LoopKind::While,
        condition: true,
    };
    let body = LoopCtx {
        kind: LoopKind::While,
        condition: false,
    };
    assert_eq!(seg(&s, "curl -s localhost:8080").in_loop, Some(cond));
    assert_eq!(seg(&s, "sleep 2").in_loop, Some(body));
    assert_eq!(seg(&s, "echo up").in_loop, None);

    let s = split("until a; do for x in $(b); do c $(d); done; done");
    assert_eq!(
        seg(&s, "a").in_loop,
        Some(LoopCtx {
            kind: LoopKind::Until,
            condition: true
        })
    );
    assert_eq!(
        seg(&s, "b").in_loop,
        Some(LoopCtx {
            kind: LoopKind::Until,
            condition: false
        })
    );
    let for_body = Some(LoopCtx {
        kind: LoopKind::For,
        condition: false,
    });
    assert_eq!(seg(&s, "c $(d)").in_loop, for_body);
    assert_eq!(seg(&s, "d").in_loop, for_body);

    let s = split("while true; do bash -c 'sleep 1'; done");
    assert_eq!(seg(&s, "sleep 1").in_loop, Some(body));
    assert_eq!(split("echo while; sleep 1").segments[1].in_loop, None);
}

#[test]
fn heredocs_are_data_unless_fed_to_a_shell() {
    let s = split("cat <<EOF\nrm -rf /\nEOF\necho after");
    assert_eq!(
        texts("cat <<EOF\nrm -rf /\nEOF\necho after"),
        ["cat", "echo after"]
    );
    assert_eq!(s.segments[0].stdin_data(), Some("rm -rf /\n"));
    assert_eq!(s.segments[0].redirects[0].target, "EOF");

    let s = split("python3 - <<'PY' && echo ok\nimport os\nos.system('x')\nPY");
    assert_eq!(
        texts("python3 - <<'PY' && echo ok\nimport os\nPY"),
        ["python3 -", "echo ok"]
    );
    assert_eq!(
        s.segments[0].stdin_data(),
        Some("import os\nos.system('x')\n")
    );

    let s = split("cat <<-EOF\n\t\tindented\n\tEOF");
    assert_eq!(s.segments[0].stdin_data(), Some("indented\n"));

    assert_eq!(texts("cat <<A <<'B'\n$(x)\nA\n$(y)\nB"), ["x", "cat"]);
    assert_eq!(
        texts("bash <<EOF\ncd /tmp\nrm -rf /\nEOF"),
        ["bash", "cd /tmp", "rm -rf /"]
    );
    assert_eq!(
        texts("sudo bash <<EOF\nls\nEOF"),
        ["sudo bash", "bash", "ls"]
    );
    assert_eq!(texts("bash < script.sh <<EOF\nls\nEOF"), ["bash", "ls"]);
    assert_eq!(texts("bash <<EOF < script.sh\nls\nEOF"), ["bash"]);
    assert_eq!(
        texts("echo $(cat <<EOF\nx\nEOF\n)"),
        ["cat", "echo '$(cat <<EOF\nx\nEOF\n)'"]
    );
    let s = split("bash <<EOF\nwhile true; do sleep 1; done\nEOF");
    assert_eq!(seg(&s, "sleep 1").origin, Origin::Script("bash".into()));
}

#[test]
fn redirects_are_recorded() {
    let s = split("a 2>&1 >out 2>>err &>all <in >|clob <>rw 3>&- >&file {fd}>x");
    let ops: Vec<(&str, &str, bool)> = s.segments[0]
        .redirects
        .iter()
        .map(|r| (r.op.as_str(), r.target.as_str(), r.writes()))
        .collect();
    assert_eq!(
        ops,
        [
            ("2>&", "1", false),
            (">", "out", true),
            ("2>>", "err", true),
            ("&>", "all", true),
            ("<", "in", false),
            (">|", "clob", true),
            ("<>", "rw", true),
            ("3>&", "-", false),
            (">&", "file", true),
            ("{fd}>", "x", true),
        ]
    );
    let s = split("echo x > \"$HOME/.env\"");
    assert_eq!(s.segments[0].redirects[0].target, "$HOME/.env");
    let s = split("sudo tee x > .env");
    assert!(s.segments.iter().all(|g| g.redirects.len() == 1));
    assert_eq!(split("a 2 > f").segments[0].argv, ["a", "2"]);
    assert_eq!(split("a \\2>f").segments[0].argv, ["a", "2"]);
}

#[test]
fn depth_origin_and_raw() {
    let s = split("FOO=1 sudo /bin/rm -rf / && bash -c \"$(curl -s x)\"");
    let sudo = &s.segments[0];
    assert_eq!(
        (sudo.text.as_str(), sudo.depth, sudo.program()),
        ("sudo /bin/rm -rf /", 0, Some("sudo"))
    );
    assert_eq!(sudo.raw, "FOO=1 sudo /bin/rm -rf /");
    let rm = &s.segments[1];
    assert_eq!(
        (rm.text.as_str(), rm.depth, &rm.origin),
        ("rm -rf /", 1, &Origin::Wrapped("sudo".into()))
    );
    assert_eq!(rm.raw, sudo.raw);
    let curl: Vec<_> = s
        .segments
        .iter()
        .filter(|g| g.text == "curl -s x")
        .collect();
    assert_eq!(
        curl.len(),
        1,
        "the substitution is not repeated from the script: {s:#?}"
    );
    assert_eq!((curl[0].depth, &curl[0].origin), (1, &Origin::Substitution));
    let s = split("cat <(ls)");
    assert_eq!(
        (s.segments[0].depth, &s.segments[0].origin),
        (1, &Origin::ProcessSubstitution)
    );
    assert_eq!(split("> f").segments[0].program(), None);
    assert_eq!(split("a; a").segments.len(), 2);
}

#[test]
fn shape_follows_the_spec() {
    let cases = [
        ("PGPASSWORD=x ./bin/psql -h h", "psql"),
        ("git push origin main", "git push"),
        ("git -C x status", "git"),
        (
            "python3 scripts/fetch-tool.py --x",
            "python3 scripts/fetch-tool.py",
        ),
        ("sudo rm -rf x", "sudo"),
        ("cd build && ls", "cd"),
        ("docker compose up", "docker compose"),
        ("cargo", "cargo"),
        ("nohup npm run build &", "npm run"),
        ("/usr/bin/make -j4", "make"),
        ("> f", ""),
    ];
    for (cmd, want) in cases {
        assert_eq!(shape(&split(cmd).segments[0]), want, "{cmd}");
    }
}

#[test]
fn quote_round_trips_and_stays_readable() {
    let cases: &[(&[&str], &str)] = &[
        (&["ls", "-la", "a/b.c"], "ls -la a/b.c"),
        (&["echo", "a b", "", "it's"], "echo 'a b' '' 'it'\\''s'"),
        (
            &["echo", "$HOME", "*", "{}", ";", "~", "#x"],
            "echo '$HOME' '*' '{}' ';' '~' '#x'",
        ),
        (&["if", "x"], "'if' x"),
        (&["A=1", "B=2"], "'A=1' B=2"),
        (&["e\u{301}", "\n"], "'e\u{301}' '\n'"),
    ];
    for (argv, want) in cases {
        let argv: Vec<String> = argv.iter().map(|w| (*w).to_owned()).collect();
        let q = quote(&argv);
        assert_eq!(q, *want);
        let back = split(&q);
        if argv[0] != "A=1" {
            assert_eq!(back.segments[0].argv, argv, "{q}");
        }
    }
}
