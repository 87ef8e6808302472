//! The report's files import one way: no two files of `src/` name each other, and only the
//! assembler (`report`) names the table builders.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file is, as `crate::` paths name it: `runner/phases.rs` → `runner::phases`,
/// `runner/mod.rs` → `runner`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|p| p != "mod" && p != "lib")
        .collect();
    parts.join("::")
}

/// The modules of `known` that the file of module `me` names through `crate::` or
/// `super::` (the longest path that matches, each name of a `{...}` group on its own),
/// outside comments and the file's own `#[cfg(test)]` module. A parent naming the
/// submodules it declares (`mod phases;`) contains them and is not counted.
fn imports(me: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let parent = me.rsplit_once("::").map_or("", |(p, _)| p);
    let mut found = BTreeSet::new();
    let mut resolve = |path: &str| {
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        for n in (1..=segments.len()).rev() {
            let candidate = segments[..n].join("::");
            if known.contains(&candidate) {
                found.insert(candidate);
                return;
            }
        }
        if !parent.is_empty() && path.starts_with(parent) {
            found.insert(parent.to_string());
        }
    };
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        for (prefix, base) in [
            ("crate::", String::new()),
            ("super::", format!("{parent}::")),
        ] {
            for (at, _) in line.match_indices(prefix) {
                if prefix == "super::" && line[..at].ends_with("crate::") {
                    continue;
                }
                let rest = &line[at + prefix.len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let group = group.split('}').next().unwrap_or("");
                    for name in group.split(',') {
                        let name = name.trim().split("::").next().unwrap_or("");
                        resolve(&format!("{base}{name}"));
                    }
                } else {
                    let path: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                        .collect();
                    resolve(&format!("{base}{path}"));
                }
            }
        }
    }
    found
}

/// Which module of `src/` names which others.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|f| (module_of(&src, f), f.clone()))
        .collect();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, f)| {
            let mut uses = imports(m, &std::fs::read_to_string(f).unwrap(), &known);
            uses.remove(m);
            (m.clone(), uses)
        })
        .collect()
}

/// The modules that build tables from results; the assembler calls them all.
const BUILDERS: [&str; 12] = [
    "idle_cost",
    "capacity",
    "certainty",
    "curve_table",
    "knobs",
    "rooms",
    "rounds",
    "scenarios",
    "scorecard",
    "sizes",
    "summary",
    "transports",
];

#[test]
fn no_two_files_of_the_report_import_each_other() {
    let graph = graph();
    let mut circles = Vec::new();
    for (a, uses) in &graph {
        for b in uses {
            if a < b && graph.get(b).is_some_and(|back| back.contains(a)) {
                circles.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other: {circles:?}"
    );
}

#[test]
fn only_the_assembler_imports_the_table_builders() {
    let graph = graph();
    let mut strays = Vec::new();
    for (module, uses) in &graph {
        // `compare` assembles the other document (two runs side by side) and reads the
        // rounds' machine-speed indexes.
        if module == "report" || module == "compare" {
            continue;
        }
        for builder in BUILDERS.iter().filter(|b| uses.contains(**b)) {
            strays.push(format!("{module} -> {builder}"));
        }
    }
    assert!(
        strays.is_empty(),
        "builders imported outside the assembler: {strays:?}"
    );
}

#[test]
fn the_table_primitives_import_no_builder_and_no_assembler() {
    // `rows` names the results a row comes from; the primitives know nothing of results.
    let graph = graph();
    let uses = &graph["table"];
    let wrong: Vec<&String> = uses
        .iter()
        .filter(|m| {
            m.as_str() == "report" || BUILDERS.contains(&m.as_str()) || m.as_str() == "rows"
        })
        .collect();
    assert!(wrong.is_empty(), "table imports {wrong:?}");
}
