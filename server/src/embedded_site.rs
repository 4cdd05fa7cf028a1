//! The site carried inside the `heddle` binary (built with the
//! `embedded-site` feature, which `cargo xtask build --release` turns on):
//! the browser's bundle, the CSS and `public/`, served before the pages'
//! fallback, gzipped to browsers that accept it. A binary built without
//! the feature carries nothing and serves the site folder (`--site-root`);
//! so does one given `--site-root` explicitly.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

mod files {
    include!(concat!(env!("OUT_DIR"), "/site_files.rs"));
}

/// A set of site files: path from the site root (no leading `/`), bytes.
#[derive(Clone, Copy, Debug)]
pub struct Site(&'static [(&'static str, &'static [u8])]);

impl Site {
    /// The site this binary carries, if it carries one.
    pub fn embedded() -> Option<Site> {
        let site = Site(files::FILES);
        site.get("pkg/heddle.js").is_some().then_some(site)
    }

    /// A site of these files (for tests).
    pub fn of(files: &'static [(&'static str, &'static [u8])]) -> Site {
        Site(files)
    }

    fn get(&self, path: &str) -> Option<&'static [u8]> {
        self.0
            .iter()
            .find(|(name, _)| *name == path)
            .map(|(_, bytes)| *bytes)
    }

    /// The answer to `GET`/`HEAD` `path`, when the site has that file:
    /// the gzipped copy when there is one and the browser accepts it.
    pub fn respond(&self, method: &Method, path: &str, accepts_gzip: bool) -> Option<Response> {
        if method != Method::GET && method != Method::HEAD {
            return None;
        }
        let name = path.trim_start_matches('/');
        if name.is_empty() || name.ends_with(".gz") {
            return None;
        }
        let plain = self.get(name)?;
        let zipped = accepts_gzip
            .then(|| self.get(&format!("{name}.gz")))
            .flatten();
        let body = zipped.unwrap_or(plain);
        let mut response = if method == Method::HEAD {
            Body::empty().into_response()
        } else {
            Body::from(body).into_response()
        };
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(name)),
        );
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if zipped.is_some() {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        Some(response)
    }
}

/// The type of a site file, by its extension.
fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js") => "text/javascript",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css",
        Some("html") => "text/html; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") | Some("webmanifest") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Middleware: answers requests for the site's files from `site`, and
/// passes everything else on.
pub async fn serve(site: Site, request: Request, next: Next) -> Response {
    let accepts_gzip = request
        .headers()
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.split(',').any(|part| part.trim().starts_with("gzip")));
    match site.respond(request.method(), request.uri().path(), accepts_gzip) {
        Some(response) => response,
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;
    use axum::http::{Method, header};

    use super::Site;

    static FILES: &[(&str, &[u8])] = &[
        ("pkg/heddle.js", b"console.log('hi');"),
        ("pkg/heddle.js.gz", b"\x1f\x8bzipped"),
        ("pkg/heddle_bg.wasm", b"\0asm"),
        ("favicon.svg", b"<svg/>"),
    ];

    #[tokio::test]
    async fn files_are_served_gzipped_when_the_browser_takes_it() {
        let site = Site::of(FILES);
        let zipped = site
            .respond(&Method::GET, "/pkg/heddle.js", true)
            .expect("the file is there");
        assert_eq!(zipped.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(zipped.headers()[header::CONTENT_TYPE], "text/javascript");
        let body = to_bytes(zipped.into_body(), 1024).await.expect("a body");
        assert_eq!(&body[..], b"\x1f\x8bzipped");

        let plain = site
            .respond(&Method::GET, "/pkg/heddle.js", false)
            .expect("the file is there");
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        let body = to_bytes(plain.into_body(), 1024).await.expect("a body");
        assert_eq!(&body[..], b"console.log('hi');");

        let wasm = site
            .respond(&Method::GET, "/pkg/heddle_bg.wasm", true)
            .expect("the file is there");
        assert_eq!(wasm.headers()[header::CONTENT_TYPE], "application/wasm");
        assert!(wasm.headers().get(header::CONTENT_ENCODING).is_none());
    }

    #[test]
    fn only_the_sites_own_files_are_answered() {
        let site = Site::of(FILES);
        for path in [
            "/",
            "/graphs/x",
            "/pkg/heddle.js.gz",
            "/pkg/../Cargo.toml",
            "/pkg/other.js",
        ] {
            assert!(site.respond(&Method::GET, path, true).is_none(), "{path}");
        }
        assert!(
            site.respond(&Method::POST, "/pkg/heddle.js", true)
                .is_none()
        );
        assert!(site.respond(&Method::HEAD, "/favicon.svg", false).is_some());
        // A binary built without the feature carries no site.
        #[cfg(not(feature = "embedded-site"))]
        assert!(Site::embedded().is_none());
    }
}
