//! README.md and the pages of docs/: every relative link names a file
//! that exists (a page moved or renamed breaks no link unseen).

use std::path::{Path, PathBuf};

/// The relative link targets of a Markdown text (`[text](target)`), without
/// their `#anchor`; web addresses and bare anchors are not files.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = vec![];
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    links
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = vec![];
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in relative_links(&text) {
            seen += 1;
            if !page.parent().unwrap().join(&link).exists() {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
    assert!(seen >= 13, "the README links each page of docs/ ({seen} links seen)");
}

#[test]
fn the_readme_links_every_page_of_docs_and_stays_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked = relative_links(&readme);
    for page in pages().iter().filter(|p| p.parent().unwrap().ends_with("docs")) {
        let name = format!("docs/{}", page.file_name().unwrap().to_str().unwrap());
        assert!(linked.contains(&name), "README.md does not link {name}");
    }
    assert!(readme.lines().count() <= 300, "README.md is for a newcomer: at most about 300 lines");
}

#[test]
fn a_link_is_found_outside_code_and_without_its_anchor() {
    let text = "see [a](docs/a.md#part) and [b](https://example.com)\n```\n[c](c.md)\n```\n[d](d.md)";
    assert_eq!(relative_links(text), ["docs/a.md", "d.md"]);
}

/// docs/operating.md's Settings table lists every setting of `serve`,
/// with its environment variable, and its example file is one `serve`
/// accepts.
#[test]
fn every_setting_of_serve_is_documented_and_the_example_file_checks() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operating.md")).unwrap();
    // (without the environment: clap shows a set variable's value)
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["serve", "--help"]).env_clear().output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let mut flags = vec![];
    let mut lines = help.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(flag) = line.trim_start().strip_prefix("--") else { continue };
        let flag = flag.split([' ', '<']).next().unwrap().to_string();
        // its environment variable: the next `[env: NAME...]` before the next flag
        let env = lines
            .clone()
            .take_while(|l| !l.trim_start().starts_with("--"))
            .find_map(|l| l.trim().strip_prefix("[env: ").map(|e| e.trim_end_matches(']').split('=').next().unwrap().to_string()));
        if flag != "config" && flag != "help" {
            flags.push((flag, env));
        }
    }
    assert!(flags.len() > 25, "{flags:?}");
    for (flag, env) in &flags {
        let env = env.as_deref().unwrap_or_else(|| panic!("--{flag} has no environment variable"));
        assert!(page.contains(&format!("| `{flag}` | `{env}` |")), "docs/operating.md's Settings table lacks `{flag}` with `{env}`");
    }
    let example = page.split("```toml\n").nth(1).expect("an example file").split("```").next().unwrap();
    let file = std::env::temp_dir().join(format!("switchboard-docs-{}.toml", std::process::id()));
    std::fs::write(&file, example).unwrap();
    let checked = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["config", "check"]).arg(&file).output().unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(checked.status.success(), "the example: {}", String::from_utf8_lossy(&checked.stderr));
}
