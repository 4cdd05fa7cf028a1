//! The code's direction, checked: which crate may use which, and no import
//! circles between the files of a crate.
//!
//! Cargo already refuses a dependency cycle between crates, and each
//! crate's manifest says what it may use (the store has no web framework,
//! the wire types no store). What cargo cannot see is done here, by reading
//! the sources as text:
//! - **Layers:** the server reaches the app only for its pages (`App` and
//!   `shell`): data, access decisions and the runs ledger are the store's.
//! - **Circles:** a file's imports (`use crate::…`, `super::…`, paths in
//!   code) point at other files of its crate; following them must never
//!   lead back to where it started. A circle means two files are one
//!   concern split in two, or that a shared piece lives in the wrong one.
//!
//! `cargo xtask layers` prints what it finds; the test below fails the
//! build on it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The crates whose files are checked for circles, by source folder.
pub const CRATES: &[&str] = &[
    "engine/src",
    "wire/src",
    "store/src",
    "app/src",
    "server/src",
    "frontend/src",
    "xtask/src",
];

/// What the server may take from the app: its pages.
const SERVER_MAY_USE_FROM_APP: &[&str] = &["App", "shell"];

/// One module file of a crate, by its module path (`["run", "store"]`).
type ModulePath = Vec<String>;

/// A crate's files and the imports between them.
#[derive(Debug, Default)]
pub struct Graph {
    files: BTreeMap<ModulePath, PathBuf>,
    edges: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
    /// Each module's re-exports (`pub use child::Name;`): a name used
    /// through the module leads on to the file that defines it.
    reexports: BTreeMap<ModulePath, BTreeMap<String, Vec<String>>>,
}

/// What is wrong, one line each.
pub fn problems(workspace: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for dir in CRATES {
        let graph = read_crate(&workspace.join(dir))?;
        for circle in graph.circles() {
            let names: Vec<String> = circle
                .iter()
                .map(|module| {
                    let file = &graph.files[module];
                    file.strip_prefix(workspace)
                        .unwrap_or(file)
                        .display()
                        .to_string()
                })
                .collect();
            let members: BTreeSet<&ModulePath> = circle.iter().collect();
            let mut ties = Vec::new();
            for from in &circle {
                for to in graph.edges.get(from).into_iter().flatten() {
                    if members.contains(to) {
                        ties.push(format!("\n    {} -> {}", from.join("::"), to.join("::")));
                    }
                }
            }
            found.push(format!(
                "{dir}: import circle through {}; its imports:{}",
                names.join(", "),
                ties.concat()
            ));
        }
    }
    found.extend(server_uses_of_app(&workspace.join("server"))?);
    Ok(found)
}

/// Every use of `heddle_app::` in the server but for its pages.
fn server_uses_of_app(server: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for file in rust_files(server)? {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        for (number, line) in text.lines().enumerate() {
            let code = strip_comment(line);
            let Some(at) = code.find("heddle_app::") else {
                continue;
            };
            let rest = &code[at + "heddle_app::".len()..];
            let names = imported_names(rest);
            if names
                .iter()
                .any(|name| !SERVER_MAY_USE_FROM_APP.contains(&name.as_str()))
            {
                found.push(format!(
                    "{}:{}: the server uses the app's `{}`; data, access and runs are the store's \
                     (heddle_store), shared types the wire's (heddle_wire)",
                    file.display(),
                    number + 1,
                    rest.trim_end_matches(';')
                ));
            }
        }
    }
    Ok(found)
}

/// The first names of `App, shell}` or `App;` or `{App, shell};`.
fn imported_names(rest: &str) -> Vec<String> {
    let rest = rest.trim_start_matches('{');
    let end = rest.find([';', '}']).unwrap_or(rest.len());
    rest[..end]
        .split(',')
        .map(|part| {
            part.trim()
                .split("::")
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Reads the files under `src` and the imports between them.
pub fn read_crate(src: &Path) -> Result<Graph> {
    let mut graph = Graph::default();
    let mut texts = BTreeMap::new();
    for file in rust_files(src)? {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let mut module: ModulePath = relative
            .with_extension("")
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("lib" | "main" | "mod")
        ) {
            module.pop();
        }
        let mut text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        // A file's tests (an inline `mod tests` at its end) are not part
        // of its structure, and their `super::` is one level deeper.
        if let Some(at) = text.find("#[cfg(test)]\nmod ") {
            text.truncate(at);
        }
        texts.insert(module.clone(), text);
        graph.files.insert(module, file);
    }
    for (module, text) in &texts {
        let children = graph.children(module);
        let names = reexports_in(text, &children);
        graph.reexports.insert(module.clone(), names);
    }
    for (module, text) in &texts {
        let mut targets = BTreeSet::new();
        // A path may also start at a child module (`agent::build`, `use
        // agent::X`): such paths are read as `self::…`.
        let children = graph.children(module);
        for path in paths_in(text, &children) {
            if let Some(target) = graph.resolve(module, &path)
                && &target != module
                && !is_ancestor(&target, module)
            {
                targets.insert(target);
            }
        }
        graph.edges.insert(module.clone(), targets);
    }
    Ok(graph)
}

/// Whether `ancestor` contains `module` (a parent module's file is not an
/// import target for its children's `super::` paths to items it merely
/// declares; it is counted when they name an item defined there).
fn is_ancestor(ancestor: &ModulePath, module: &ModulePath) -> bool {
    ancestor.len() < module.len() && module.starts_with(ancestor)
}

impl Graph {
    /// The file a path names: the longest prefix of it that is a module
    /// file, from the crate root (`crate::`) or from `module` (`super::`,
    /// `self::`).
    /// The names of `module`'s child modules that have files.
    fn children(&self, module: &ModulePath) -> BTreeSet<String> {
        self.files
            .keys()
            .filter(|other| other.len() == module.len() + 1 && other.starts_with(module))
            .filter_map(|child| child.last().cloned())
            .collect()
    }

    fn resolve(&self, module: &ModulePath, path: &[String]) -> Option<ModulePath> {
        self.resolve_within(module, path, 0)
    }

    fn resolve_within(
        &self,
        module: &ModulePath,
        path: &[String],
        hops: usize,
    ) -> Option<ModulePath> {
        let (mut base, rest) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("super") | Some("self") => {
                let mut base = module.clone();
                let mut rest = path;
                while let Some(first) = rest.first() {
                    match first.as_str() {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                (base, rest)
            }
            _ => return None,
        };
        let mut best = base.clone();
        let mut taken = 0;
        for segment in rest {
            base.push(segment.clone());
            if self.files.contains_key(&base) {
                best = base.clone();
                taken += 1;
            } else {
                break;
            }
        }
        if !self.files.contains_key(&best) {
            return None;
        }
        // A name the module re-exports is defined elsewhere: follow it.
        if let Some(name) = rest.get(taken)
            && let Some(target) = self.reexports.get(&best).and_then(|names| names.get(name))
            && hops < 8
        {
            let onward = [target.as_slice(), &rest[taken + 1..]].concat();
            if let Some(found) = self.resolve_within(&best, &onward, hops + 1) {
                return Some(found);
            }
        }
        Some(best)
    }

    /// Every circle (each strongly connected group of two or more files),
    /// as the files in it, sorted.
    pub fn circles(&self) -> Vec<Vec<ModulePath>> {
        let nodes: Vec<&ModulePath> = self.files.keys().collect();
        let index: BTreeMap<&ModulePath, usize> =
            nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let edges: Vec<Vec<usize>> = nodes
            .iter()
            .map(|module| {
                self.edges
                    .get(*module)
                    .into_iter()
                    .flatten()
                    .filter_map(|target| index.get(target).copied())
                    .collect()
            })
            .collect();
        strongly_connected(&edges)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let mut files: Vec<ModulePath> = group.iter().map(|&i| nodes[i].clone()).collect();
                files.sort();
                files
            })
            .collect()
    }
}

/// Tarjan's algorithm, with an explicit stack (no recursion).
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let count = edges.len();
    let mut order = vec![usize::MAX; count];
    let mut low = vec![0; count];
    let mut on_stack = vec![false; count];
    let mut stack = Vec::new();
    let mut groups = Vec::new();
    let mut next = 0;
    for start in 0..count {
        if order[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        while let Some(&mut (node, ref mut child)) = work.last_mut() {
            if *child == 0 && order[node] == usize::MAX {
                order[node] = next;
                low[node] = next;
                next += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&target) = edges[node].get(*child) {
                *child += 1;
                if order[target] == usize::MAX {
                    work.push((target, 0));
                } else if on_stack[target] {
                    low[node] = low[node].min(order[target]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                let mut group = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    group.push(member);
                    if member == node {
                        break;
                    }
                }
                groups.push(group);
            }
        }
    }
    groups
}

/// The names `text` re-exports from its own crate (`pub use child::A;`,
/// `pub(crate) use crate::x::{B, C};`), each with the path it names.
fn reexports_in(text: &str, children: &BTreeSet<String>) -> BTreeMap<String, Vec<String>> {
    let code = code_only(text);
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        let mut statement = statement.trim();
        // Attributes first (`#[cfg(feature = "x")] pub use …`).
        while statement.starts_with("#[") {
            match statement.find(']') {
                Some(end) => statement = statement[end + 1..].trim_start(),
                None => break,
            }
        }
        let Some(tree_text) = ["pub use ", "pub(crate) use ", "pub(super) use "]
            .into_iter()
            .find_map(|start| statement.strip_prefix(start))
        else {
            continue;
        };
        let (paths, _) = tree(tree_text.trim());
        for mut path in paths {
            let rooted = matches!(
                path.first().map(String::as_str),
                Some("crate" | "super" | "self")
            );
            if !rooted {
                if path.first().is_some_and(|first| children.contains(first)) {
                    path.insert(0, "self".to_owned());
                } else {
                    continue;
                }
            }
            if let Some(name) = path.last().filter(|name| name.as_str() != "self") {
                names.insert(name.clone(), path);
            }
        }
    }
    names
}

/// A line without its `//` comment (doc comments included).
fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Every path that starts at `crate`, `super` or `self` in `text`, with
/// `use` groups (`crate::a::{b, c::d}`) expanded. Comments and string
/// literals are skipped.
pub fn paths_in(text: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let code = code_only(text);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let starts_word = at == 0 || !is_ident(bytes[at - 1]) && bytes[at - 1] != b':';
        let rest = &code[at..];
        let root = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|root| rest.starts_with(root));
        match root {
            Some(root) if starts_word => {
                let name = &root[..root.len() - 2];
                let (paths, used) = tree(&code[at + root.len()..]);
                for mut path in paths {
                    path.insert(0, name.to_owned());
                    found.push(path);
                }
                at += root.len() + used.max(1);
            }
            _ if starts_word && is_ident(bytes[at]) => {
                let word_end = rest
                    .find(|c: char| !is_ident(c as u8))
                    .unwrap_or(rest.len());
                let word = &rest[..word_end];
                if children.contains(word) && rest[word_end..].starts_with("::") {
                    let (paths, used) = tree(rest);
                    for mut path in paths {
                        path.insert(0, "self".to_owned());
                        found.push(path);
                    }
                    at += used.max(1);
                } else {
                    at += word_end.max(1);
                }
            }
            _ => at += 1,
        }
    }
    found
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Reads a use tree at the start of `text`: `a::b`, `a::{b, c::{d}}`,
/// `{a, b}`. Returns its paths and how many bytes it took.
fn tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut prefix = Vec::new();
    loop {
        if bytes.get(at) == Some(&b'{') {
            let mut paths = Vec::new();
            at += 1;
            loop {
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
                {
                    at += 1;
                }
                match bytes.get(at) {
                    None => return (paths, at),
                    Some(b'}') => {
                        at += 1;
                        return (
                            paths
                                .into_iter()
                                .map(|tail: Vec<String>| [prefix.clone(), tail].concat())
                                .collect(),
                            at,
                        );
                    }
                    _ => {
                        let (inner, used) = tree(&text[at..]);
                        if used == 0 {
                            at += 1;
                        }
                        at += used;
                        paths.extend(inner);
                    }
                }
            }
        }
        let start = at;
        while bytes.get(at).copied().is_some_and(is_ident) {
            at += 1;
        }
        if at == start {
            return (vec![prefix], at);
        }
        prefix.push(text[start..at].to_owned());
        if text[at..].starts_with("::") {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// `text` with comments and the insides of string literals blanked, so
/// neither is read as a path.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                out.push(' ');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                    out.push(if c == '\n' { '\n' } else { ' ' });
                }
            }
            '\'' => {
                // A char literal ('"', '\'') or a lifetime ('a): skip a
                // literal's inside, keep a lifetime.
                let ahead: String = chars.clone().take(3).collect();
                if ahead.starts_with('\\') {
                    chars.next();
                    chars.next();
                    if chars.peek() == Some(&'\'') {
                        chars.next();
                    }
                    out.push(' ');
                } else if ahead.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                    out.push(' ');
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("xtask is inside the workspace")
            .to_path_buf()
    }

    #[test]
    fn the_code_runs_one_way_with_no_circles() {
        let found = problems(&workspace()).expect("the sources read");
        assert!(
            found.is_empty(),
            "the code's direction is broken (docs/development.md, \"The code's direction\"):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn use_trees_and_paths_are_read() {
        let text = "use crate::a::{b, c::{d, e}};\nfn f() { super::g::h(); let s = \"crate::x\"; }\n// crate::y\nlet c = '\"'; self::k::L; kid::m(); std::kid::n();";
        let children = BTreeSet::from(["kid".to_owned()]);
        let paths: Vec<String> = paths_in(text, &children)
            .iter()
            .map(|p| p.join("::"))
            .collect();
        assert_eq!(
            paths,
            [
                "crate::a::b",
                "crate::a::c::d",
                "crate::a::c::e",
                "super::g::h",
                "self::k::L",
                "self::kid::m"
            ]
        );
    }

    #[test]
    fn a_name_a_parent_re_exports_leads_to_the_file_that_defines_it() {
        let children = BTreeSet::from(["inner".to_owned()]);
        let names = reexports_in(
            "#[cfg(feature = \"x\")]\npub use inner::{Thing, other::Deep};\nuse inner::Private;",
            &children,
        );
        assert_eq!(names["Thing"], ["self", "inner", "Thing"]);
        assert_eq!(names["Deep"], ["self", "inner", "other", "Deep"]);
        assert!(!names.contains_key("Private"));
    }

    #[test]
    fn a_circle_is_found_and_a_chain_is_not() {
        let dir = std::env::temp_dir().join(format!("heddle-layers-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(src.join("a")).expect("a temp dir");
        let write = |name: &str, text: &str| {
            std::fs::write(src.join(name), text).expect("a temp file");
        };
        write("lib.rs", "mod a; mod b; mod c;");
        write("a.rs", "mod inner; use crate::b::B;");
        write("a/inner.rs", "use super::A;");
        write("b.rs", "use crate::c::C; pub struct B;");
        write("c.rs", "pub struct C;");
        let graph = read_crate(&src).expect("the files read");
        assert!(graph.circles().is_empty(), "{:?}", graph.circles());
        write("c.rs", "use crate::a::A; pub struct C;");
        let graph = read_crate(&src).expect("the files read");
        let circles = graph.circles();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(circles.len(), 1, "{circles:?}");
        assert_eq!(circles[0].len(), 3);
    }

    #[test]
    fn the_server_may_take_only_pages_from_the_app() {
        assert_eq!(imported_names("{App, shell};"), ["App", "shell"]);
        assert_eq!(imported_names("graphs::GraphId;"), ["graphs"]);
    }
}
