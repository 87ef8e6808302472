//! Every crate's files import one way: in no crate under `crates/` do two files name each
//! other, nor do three or more name one another in a ring. When two files need each
//! other, the shared piece is a third file that both import. The engine keeps one more
//! rule: its folders stand in one order ([`ENGINE_FOLDERS`]) and a file names only files
//! of its own folder or of folders below it. The report keeps another: only its assembler
//! names the table builders, and its table primitives name none of them.
//!
//! The one test of its kind in the workspace: it lives with the binary, which sits on top
//! of every other crate, and reads every crate beside it, so a new crate is covered the
//! day it is added.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Crates known to have circles, each with the work that removes them. A crate listed here
/// has its circles printed, not failed on; once it has none, the test fails until it is
/// taken off the list.
const PENDING: &[(&str, &str)] = &[];

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
/// `runner/mod.rs` → `runner`, `lib.rs` or `main.rs` → `` (the crate's root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|p| p != "mod")
        .collect();
    if parts == ["lib"] || parts == ["main"] {
        return String::new();
    }
    parts.join("::")
}

/// The file's code without its `//` comments and its own `#[cfg(test)]` module.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    code.lines()
        .map(|line| match line.find("//") {
            // `//` inside a string (a URL) is rare in a path line; a whole-line comment or
            // a trailing one is what matters here.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a `{...}` group names, each with the prefix before it: `{a, b::{c, d}}` →
/// `a`, `b::c`, `b::d`. `text` starts after the `{`.
fn group_paths(text: &str) -> Vec<String> {
    let mut depth = 0;
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                end = i;
                break;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    let inner = &text[..end];
    // Split on the commas outside nested groups.
    let (mut items, mut item, mut depth) = (Vec::new(), String::new(), 0);
    for c in inner.chars() {
        match c {
            ',' if depth == 0 => items.push(std::mem::take(&mut item)),
            '{' => {
                depth += 1;
                item.push(c);
            }
            '}' => {
                depth -= 1;
                item.push(c);
            }
            _ => item.push(c),
        }
    }
    items.push(item);
    let mut paths = Vec::new();
    for item in items {
        let item: String = item.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some((head, rest)) = item.split_once("::{") {
            paths.extend(
                group_paths(rest)
                    .into_iter()
                    .map(|p| format!("{head}::{p}")),
            );
        } else if !item.is_empty() {
            paths.push(item.split(" as ").next().unwrap_or(&item).to_string());
        }
    }
    paths
}

/// The path that starts `text`: `a::b::c(...)` → `a::b::c`.
fn path_at(text: &str) -> String {
    let path: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    path.trim_end_matches(':').to_string()
}

/// Whether `text[at..]` starts a path of its own (not the tail of a longer word or path).
fn starts_path(text: &str, at: usize) -> bool {
    !text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The modules of `known` that the file of module `me` names: through `crate::` or
/// `super::` (each name of a `{...}` group on its own), through a name such a `use` brought
/// in (`use crate::commands;` then `commands::run::run()`), and, in the crate's root, through
/// a top-level module's own name. The longest path that matches counts. A parent naming
/// the submodules it declares (`mod phases;`) contains them and is not counted.
fn imports(me: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code = code_of(text);
    let parent = me.rsplit_once("::").map_or("", |(p, _)| p);
    let resolve = |path: &str| -> Option<String> {
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        for n in (1..=segments.len()).rev() {
            let candidate = segments[..n].join("::");
            if known.contains(&candidate) {
                return Some(candidate);
            }
        }
        (!parent.is_empty() && path.starts_with(parent)).then(|| parent.to_string())
    };
    // Every path written from `crate::` or `super::`, made absolute.
    let mut absolute = Vec::new();
    for (prefix, base) in [
        ("crate::", String::new()),
        ("super::", format!("{parent}::")),
    ] {
        for (at, _) in code.match_indices(prefix) {
            if !starts_path(&code, at) {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                absolute.extend(group_paths(group).into_iter().map(|p| format!("{base}{p}")));
            } else {
                let path = path_at(rest);
                // `crate::a::{b, c}`: the group after the path.
                match rest[path.len()..].strip_prefix("::{") {
                    Some(group) => absolute.extend(
                        group_paths(group)
                            .into_iter()
                            .map(|p| format!("{base}{path}::{p}")),
                    ),
                    None => absolute.push(format!("{base}{path}")),
                }
            }
        }
    }
    let mut found: BTreeSet<String> = absolute.iter().filter_map(|p| resolve(p)).collect();
    // Names a `use` brought in that are modules, and in the root the top-level modules:
    // a path starting with one of them names it (or a module under it).
    let mut aliases: BTreeMap<String, String> = absolute
        .iter()
        .filter(|p| known.contains(p.trim_start_matches("::")))
        .map(|p| {
            let module = p.trim_start_matches("::").to_string();
            (module.rsplit("::").next().unwrap().to_string(), module)
        })
        .collect();
    if me.is_empty() {
        for module in known.iter().filter(|m| !m.is_empty() && !m.contains("::")) {
            aliases.insert(module.clone(), module.clone());
        }
    }
    for (name, module) in &aliases {
        let needle = format!("{name}::");
        for (at, _) in code.match_indices(&needle) {
            if !starts_path(&code, at) {
                continue;
            }
            let rest = path_at(&code[at + needle.len()..]);
            if let Some(m) = resolve(&format!("{module}::{rest}")) {
                found.insert(m);
            }
        }
    }
    found.remove(me);
    found
}

/// The crate's import graph: each module and the modules it names.
fn graph_of(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .iter()
        .map(|f| (module_of(src, f), f.clone()))
        .collect();
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(m, f)| {
            let uses = imports(m, &std::fs::read_to_string(f).unwrap(), &known);
            (m.clone(), uses)
        })
        .collect()
}

/// The circles of a graph, one line each: every pair of modules that name each other
/// (`a <-> b`), then every larger ring (`a -> b -> c -> a`), as the shortest way back from
/// each of its modules, each ring once.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let name = |m: &str| {
        if m.is_empty() {
            "(root)".to_string()
        } else {
            m.to_string()
        }
    };
    let mut found = Vec::new();
    for (a, uses) in graph {
        for b in uses {
            if a < b && graph.get(b).is_some_and(|back| back.contains(a)) {
                found.push(format!("{} <-> {}", name(a), name(b)));
            }
        }
    }
    // Larger rings: for each module, the shortest path back to itself, once per ring.
    let mut rings: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in graph.keys() {
        let mut previous: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut back = None;
        while let Some(at) = queue.pop_front() {
            for next in graph.get(at).into_iter().flatten() {
                if next == start {
                    back = Some(at);
                    break;
                }
                if !previous.contains_key(next) && graph.contains_key(next) {
                    previous.insert(next, at);
                    queue.push_back(graph.get_key_value(next).unwrap().0);
                }
            }
            if back.is_some() {
                break;
            }
        }
        let Some(mut at) = back else { continue };
        let mut ring = vec![at.clone()];
        while at != start {
            at = previous[at];
            ring.push(at.clone());
        }
        ring.reverse();
        if ring.len() > 2 {
            // The same ring from each of its modules: keep it once, from its least.
            let least = ring.iter().enumerate().min_by_key(|(_, m)| *m).unwrap().0;
            ring.rotate_left(least);
            rings.insert(ring);
        }
    }
    for ring in rings {
        let mut line: Vec<String> = ring.iter().map(|m| name(m)).collect();
        line.push(name(&ring[0]));
        found.push(line.join(" -> "));
    }
    found
}

/// Every crate under `crates/`, by name, with its `src/`.
fn crates() -> Vec<(String, PathBuf)> {
    let all = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates: Vec<(String, PathBuf)> = std::fs::read_dir(&all)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, p.join("src"))
        })
        .collect();
    crates.sort();
    crates
}

#[test]
fn no_two_files_of_any_crate_import_each_other() {
    let crates = crates();
    assert!(
        crates.iter().any(|(name, _)| name == "wscbench-engine"),
        "the crates were not found beside the binary's: {crates:?}"
    );
    let mut failures = Vec::new();
    for (name, src) in &crates {
        let found = circles(&graph_of(src));
        let pending = PENDING.iter().find(|(crate_name, _)| crate_name == name);
        match (pending, found.is_empty()) {
            (None, true) => {}
            (None, false) => failures.push(format!(
                "crates/{name}: files that import each other:\n  {}",
                found.join("\n  ")
            )),
            (Some((_, why)), false) => eprintln!(
                "crates/{name}: {} circle(s) left to remove ({why}):\n  {}",
                found.len(),
                found.join("\n  ")
            ),
            (Some(_), true) => failures.push(format!(
                "crates/{name} has no circle any more: take it off PENDING in crates/wscbench/tests/no_circles.rs"
            )),
        }
    }
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

/// The engine's top-level entries (folders, and the one file beside `lib.rs`), lowest
/// first: a module may name modules of its own entry or of the entries before it, never
/// of one after it. `lib.rs` declares them all and stands above them.
const ENGINE_FOLDERS: [&str; 8] = [
    "error_class",
    "net",
    "docker",
    "catalog",
    "verify",
    "load",
    "judge",
    "runner",
];

/// The top-level entry a module belongs to: `load::native` → `load`; the root is none.
fn folder_of(module: &str) -> Option<&str> {
    (!module.is_empty()).then(|| module.split("::").next().unwrap())
}

/// The arrows of `graph` that run up `order` (lowest first), one line each:
/// `from -> to (folder -> higher folder)`; a module of a folder `order` does not name is
/// an arrow of its own kind, so that a new folder must take its place in the order.
fn upward_arrows(graph: &BTreeMap<String, BTreeSet<String>>, order: &[&str]) -> Vec<String> {
    let rank = |module: &str| folder_of(module).map(|f| order.iter().position(|o| *o == f));
    let mut found = Vec::new();
    for (from, uses) in graph {
        match rank(from) {
            None => continue,
            Some(None) => {
                found.push(format!("{from}: its folder is not in the order"));
                continue;
            }
            Some(Some(_)) => {}
        }
        for to in uses {
            if let (Some(Some(a)), Some(Some(b))) = (rank(from), rank(to))
                && b > a
            {
                found.push(format!("{from} -> {to} ({} -> {})", order[a], order[b]));
            }
        }
    }
    found
}

/// The engine crate's import graph.
fn engine_graph() -> BTreeMap<String, BTreeSet<String>> {
    let (_, src) = crates()
        .into_iter()
        .find(|(name, _)| name == "wscbench-engine")
        .expect("crates/wscbench-engine");
    graph_of(&src)
}

#[test]
fn no_arrow_of_the_engine_runs_up_from_a_folder_to_a_higher_one() {
    let graph = engine_graph();
    let entries: BTreeSet<&str> = graph.keys().filter_map(|m| folder_of(m)).collect();
    assert!(
        entries.len() < 10,
        "crates/wscbench-engine/src has {} entries besides lib.rs: at most nine",
        entries.len()
    );
    for folder in ENGINE_FOLDERS {
        assert!(entries.contains(folder), "no engine folder {folder}");
    }
    let upward = upward_arrows(&graph, &ENGINE_FOLDERS);
    assert!(
        upward.is_empty(),
        "\ncrates/wscbench-engine: arrows that run up between its folders (lowest first: {}):\n  {}\n",
        ENGINE_FOLDERS.join(", "),
        upward.join("\n  ")
    );
}

#[test]
fn an_arrow_to_a_higher_folder_or_from_an_unplaced_one_is_upward_and_one_down_or_inside_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    let order = ["low", "high"];
    assert_eq!(
        upward_arrows(&graph(&[("low::a", "high::b")]), &order),
        ["low::a -> high::b (low -> high)"]
    );
    assert_eq!(
        upward_arrows(&graph(&[("stray", "low")]), &order),
        ["stray: its folder is not in the order"]
    );
    assert!(
        upward_arrows(
            &graph(&[("high::b", "low::a"), ("low::a", "low"), ("", "high")]),
            &order
        )
        .is_empty()
    );
}

/// The report's modules that build tables from results; the assembler calls them all.
const REPORT_BUILDERS: [&str; 12] = [
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

/// The report crate's import graph.
fn report_graph() -> BTreeMap<String, BTreeSet<String>> {
    let (_, src) = crates()
        .into_iter()
        .find(|(name, _)| name == "wscbench-report")
        .expect("crates/wscbench-report");
    graph_of(&src)
}

#[test]
fn only_the_report_assembler_imports_the_table_builders() {
    let graph = report_graph();
    for builder in REPORT_BUILDERS {
        assert!(graph.contains_key(builder), "no report module {builder}");
    }
    let mut strays = Vec::new();
    for (module, uses) in &graph {
        // `compare` assembles the other document (two runs side by side) and reads the
        // rounds' machine-speed indexes.
        if module.is_empty() || module == "report" || module == "compare" {
            continue;
        }
        for builder in REPORT_BUILDERS.iter().filter(|b| uses.contains(**b)) {
            strays.push(format!("{module} -> {builder}"));
        }
    }
    assert!(
        strays.is_empty(),
        "builders imported outside the assembler: {strays:?}"
    );
}

#[test]
fn the_report_table_primitives_import_no_builder_and_no_assembler() {
    // `rows` names the results a row comes from; the primitives know nothing of results.
    let graph = report_graph();
    let wrong: Vec<&String> = graph["table"]
        .iter()
        .filter(|m| {
            m.as_str() == "report" || REPORT_BUILDERS.contains(&m.as_str()) || m.as_str() == "rows"
        })
        .collect();
    assert!(wrong.is_empty(), "table imports {wrong:?}");
}

#[test]
fn a_pair_and_a_ring_of_three_are_both_circles_and_a_line_is_none() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(
        circles(&graph(&[("a", "b"), ("b", "a")])),
        ["a <-> b".to_string()]
    );
    assert_eq!(
        circles(&graph(&[("b", "c"), ("c", "a"), ("a", "b")])),
        ["a -> b -> c -> a".to_string()]
    );
    assert!(circles(&graph(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}

#[test]
fn a_module_brought_in_by_use_and_named_later_is_an_import() {
    let known: BTreeSet<String> = ["", "cli", "commands", "commands::run", "commands::args"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cli = "use crate::commands;\nfn go() { commands::run::run(); }\n";
    assert_eq!(
        imports("cli", cli, &known),
        BTreeSet::from(["commands".to_string(), "commands::run".to_string()])
    );
    let run = "use crate::{\n    cli::RunArgs,\n    commands::args::{One, Two},\n};\n";
    assert_eq!(
        imports("commands::run", run, &known),
        BTreeSet::from(["cli".to_string(), "commands::args".to_string()])
    );
    let main = "mod cli;\n// cli::nothing\nfn main() { cli::run(); }\n";
    assert_eq!(
        imports("", main, &known),
        BTreeSet::from(["cli".to_string()])
    );
    let tests_only = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::cli::Cli;\n}\n";
    assert!(imports("commands::run", tests_only, &known).is_empty());
}
