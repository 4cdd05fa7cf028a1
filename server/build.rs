//! With the `embedded-site` feature, lists the files of the built site
//! (`target/site`, written by `cargo xtask site`) so the `heddle` binary
//! carries them (`src/embedded_site.rs`): deploying is copying one file.
//! Without the feature the list is empty and the server serves the site
//! folder (`--site-root`), which is what development and the tests use.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut entries = String::new();
    if std::env::var_os("CARGO_FEATURE_EMBEDDED_SITE").is_some() {
        let manifest = PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
        );
        let root = manifest.join("..").join("target").join("site");
        if !root.join("pkg").join("heddle.js").is_file() {
            panic!(
                "the `embedded-site` feature embeds the built site, and {} has none: run \
                 `cargo xtask site --release` first (`cargo xtask build --release` does both)",
                root.display()
            );
        }
        let mut files = Vec::new();
        collect(&root, &mut files);
        files.sort();
        println!("cargo:rerun-if-changed={}", root.display());
        for file in files {
            println!("cargo:rerun-if-changed={}", file.display());
            let name = file
                .strip_prefix(&root)
                .expect("a file under the site root")
                .to_string_lossy()
                .replace('\\', "/");
            entries.push_str(&format!(
                "    ({name:?}, include_bytes!({:?})),\n",
                file.display().to_string()
            ));
        }
    }
    let list = format!(
        "/// The site's files: path from the site root, contents.\n\
         pub static FILES: &[(&str, &[u8])] = &[\n{entries}];\n"
    );
    std::fs::write(out_dir.join("site_files.rs"), list).expect("OUT_DIR is writable");
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
            .path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
