//! The README's documentation links resolve: every `docs/…` and `examples/…` link names a
//! file in the repository, and every file in `docs/` is linked from the README.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The targets of every markdown link `](target)` in `text`, without a `#fragment`.
fn links(text: &str) -> Vec<String> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(t, _)| t))
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .collect()
}

#[test]
fn every_docs_and_examples_link_in_the_readme_resolves() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let local: Vec<String> = links(&readme)
        .into_iter()
        .filter(|l| l.starts_with("docs/") || l.starts_with("examples/"))
        .collect();
    assert!(local.len() >= 6, "{local:?}");
    for link in &local {
        assert!(
            root().join(link).is_file(),
            "README links {link}, which does not exist"
        );
    }
    // And nothing in docs/ is left unlinked.
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "md") {
            let link = format!("docs/{name}");
            assert!(local.contains(&link), "README does not link {link}");
        }
    }
}

#[test]
fn the_links_inside_docs_and_examples_resolve() {
    for dir in ["docs", "examples"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for link in links(&text) {
                let target = path.parent().unwrap().join(&link);
                assert!(
                    target.exists(),
                    "{} links {link}, which does not exist",
                    path.display()
                );
            }
        }
    }
}
