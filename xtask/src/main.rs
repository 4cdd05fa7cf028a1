//! Heddle's build steps, in Rust so they need nothing but cargo.
//!
//! `cargo xtask build [--release]` builds the site and the server:
//! 1. the front end (`heddle-frontend`) for `wasm32-unknown-unknown`;
//! 2. wasm-bindgen, used as a library at exactly the version of the
//!    `wasm-bindgen` crate the front end links (both are pinned in the
//!    workspace), writes `target/site/pkg/heddle.js` and `heddle_bg.wasm`;
//! 3. `style/main.css` becomes `pkg/heddle.css` and `public/` is copied to
//!    the site root; the bundle files get gzipped siblings the server sends
//!    to browsers that accept them;
//! 4. the `heddle` binary; a release one carries the site inside it (the
//!    server's `embedded-site` feature).
//!
//! `cargo xtask site [--release]` does steps 1 to 3 only.
//!
//! `cargo xtask layers` prints where the code breaks its direction: import
//! circles, or the server using the app for more than its pages
//! ([`layers`]; a test runs the same check in `scripts/test`).
//!
//! With `HEDDLE_WASM_NAMES=1`, a release bundle keeps its function names, so
//! a CPU profile of the optimised front end names our functions
//! (docs/performance.md, "Profiling the editor"); it is megabytes larger.
//!
//! This replaces cargo-leptos, whose install costs a quarter of an hour here
//! and which needs a separately installed wasm-bindgen CLI of the right
//! version; see the README.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

mod layers;

const USAGE: &str = "usage: cargo xtask <build|site> [--release] | cargo xtask layers";

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let task = args.next().unwrap_or_default();
    let mut release = false;
    for arg in args {
        match arg.as_str() {
            "--release" => release = true,
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    let workspace = workspace_root()?;
    let started = Instant::now();
    match task.as_str() {
        "build" => {
            build_site(&workspace, release)?;
            build_server(&workspace, release)?;
        }
        "site" => build_site(&workspace, release)?,
        "layers" => {
            let found = layers::problems(&workspace)?;
            for problem in &found {
                println!("{problem}");
            }
            if !found.is_empty() {
                bail!("{} problems with the code's direction", found.len());
            }
            println!("no import circles; the server takes only pages from the app");
        }
        _ => bail!("{USAGE}"),
    }
    eprintln!(
        "xtask: {task} done in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn workspace_root() -> Result<PathBuf> {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .context("xtask is not inside the workspace")
}

fn target_dir(workspace: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
}

fn cargo(workspace: &Path, args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(&cargo);
    command.args(args).current_dir(workspace);
    if args.contains(&"--release") || args.contains(&"wasm-release") {
        unerased(&mut command);
    }
    let status = command
        .status()
        .with_context(|| format!("cannot run {cargo}"))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn build_site(workspace: &Path, release: bool) -> Result<()> {
    let profile = if release { "wasm-release" } else { "wasm-dev" };
    cargo(
        workspace,
        &[
            "build",
            "--package",
            "heddle-frontend",
            "--lib",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            profile,
        ],
    )?;

    let profile_dir = profile;
    let wasm = target_dir(workspace)
        .join("wasm32-unknown-unknown")
        .join(profile_dir)
        .join("heddle_frontend.wasm");
    let site = workspace.join("target").join("site");
    let pkg = site.join("pkg");
    std::fs::create_dir_all(&pkg).with_context(|| format!("cannot create {}", pkg.display()))?;

    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&wasm)
        .out_name("heddle")
        .web(true)?
        .typescript(false)
        .debug(!release)
        // Function names alone are megabytes in a Leptos bundle: dropped
        // (panics still print their messages), unless kept for profiling.
        .remove_name_section(std::env::var_os("HEDDLE_WASM_NAMES").is_none())
        .remove_producers_section(release)
        .generate(&pkg)
        .with_context(|| format!("wasm-bindgen failed on {}", wasm.display()))?;

    let css = workspace.join("style").join("main.css");
    std::fs::copy(&css, pkg.join("heddle.css"))
        .with_context(|| format!("cannot copy {}", css.display()))?;
    copy_dir(&workspace.join("public"), &site)?;

    let level = if release {
        flate2::Compression::best()
    } else {
        flate2::Compression::default()
    };
    for name in ["heddle.js", "heddle_bg.wasm", "heddle.css"] {
        gzip(&pkg.join(name), level)?;
    }
    let size = std::fs::metadata(pkg.join("heddle_bg.wasm"))?.len();
    eprintln!(
        "xtask: site written to {} (wasm {:.0} KiB)",
        site.display(),
        size as f64 / 1024.0
    );
    Ok(())
}

fn build_server(workspace: &Path, release: bool) -> Result<()> {
    let mut args = vec!["build", "--package", "heddle-server", "--bin", "heddle"];
    if release {
        // A release binary carries the site it was built with, so
        // deploying is copying one file (`--site-root` still serves a
        // folder instead).
        args.extend(["--release", "--features", "embedded-site"]);
    }
    cargo(workspace, &args)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// A release builds Leptos' components with their own types, not erased
/// (`.cargo/config.toml` erases them in every other build, to compile
/// faster): the server and the bundle are built alike, so the page the
/// server renders is the one the bundle hydrates. Flags the caller set in
/// the environment are left as they are (they replace the config's
/// already).
fn unerased(command: &mut Command) {
    let caller_set_flags = ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS"]
        .iter()
        .any(|name| std::env::var_os(name).is_some());
    if !caller_set_flags {
        command.env("CARGO_ENCODED_RUSTFLAGS", "");
    }
}

/// Writes `<file>.gz` beside `file`.
fn gzip(file: &Path, level: flate2::Compression) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut gz_name = file.as_os_str().to_owned();
    gz_name.push(".gz");
    let out = std::fs::File::create(&gz_name)
        .with_context(|| format!("cannot write {}", PathBuf::from(&gz_name).display()))?;
    let mut encoder = flate2::write::GzEncoder::new(out, level);
    encoder.write_all(&bytes)?;
    encoder.finish()?;
    Ok(())
}
