//! The example nginx configuration (`deploy/nginx/heddle.conf`), run for
//! real in front of two servers on one PostgreSQL database: pages, the API
//! and websockets pass through it, requests are spread over both servers
//! with no sticky sessions, and a run's live view through it is whole.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use reqwest::Method;

use crate::replicas::{events, follow, replica_with, start_counting};
use crate::support::{Browser, Killed, on_postgres, test_database};

/// The example configuration, for `upstreams` and listening on `port`:
/// only its upstream `server` lines, its `listen` line and its `ssl_`
/// lines change.
fn example_for(upstreams: &[SocketAddr], port: u16) -> String {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/nginx/heddle.conf"),
    )
    .expect("deploy/nginx/heddle.conf");
    let (mut servers, mut listens, mut ssl) = (0, 0, 0);
    let mut site = String::new();
    for line in example.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("server 10.0.0.") {
            servers += 1;
            if servers == 1 {
                for upstream in upstreams {
                    site.push_str(&format!("    server {upstream};\n"));
                }
            }
        } else if trimmed == "listen 443 ssl;" {
            listens += 1;
            site.push_str(&format!("    listen 127.0.0.1:{port};\n"));
        } else if trimmed.starts_with("ssl_") {
            ssl += 1;
        } else {
            site.push_str(line);
            site.push('\n');
        }
    }
    assert_eq!(
        (servers, listens, ssl),
        (3, 1, 2),
        "the example's upstream, listen and ssl lines changed: update this test"
    );
    site
}

/// nginx serving `site` from `dir`, in the foreground, logging which
/// upstream served each request to `dir/access.log`.
fn nginx(dir: &std::path::Path, site: &str) -> Killed {
    let d = dir.display();
    std::fs::write(dir.join("site.conf"), site).unwrap();
    std::fs::create_dir_all(dir.join("temp")).unwrap();
    let main = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n\
           log_format upstreams '$upstream_addr $request_method $uri $status';\n\
           access_log {d}/access.log upstreams;\n\
           client_body_temp_path {d}/temp/body;\n\
           proxy_temp_path {d}/temp/proxy;\n\
           fastcgi_temp_path {d}/temp/fastcgi;\n\
           uwsgi_temp_path {d}/temp/uwsgi;\n\
           scgi_temp_path {d}/temp/scgi;\n\
           include {d}/site.conf;\n\
         }}\n"
    );
    std::fs::write(dir.join("nginx.conf"), main).unwrap();
    // Its workers run as `nobody` when the tests run as root.
    for path in [dir.to_path_buf(), dir.join("temp")] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    Command::new("nginx")
        .args(["-p"])
        .arg(dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(Killed)
        .expect("nginx starts")
}

fn nginx_installed() -> bool {
    Command::new("nginx")
        .arg("-v")
        .output()
        .is_ok_and(|output| output.status.success())
}

#[tokio::test]
async fn two_servers_behind_the_example_nginx_configuration() {
    if !on_postgres() {
        return;
    }
    if !nginx_installed() {
        // scripts/test installs nginx and sets this: there it cannot skip.
        assert!(
            std::env::var_os("HEDDLE_REQUIRE_NGINX").is_none(),
            "nginx is not installed"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = test_database(dir.path()).await;
    let key = dir.path().join("team.key");
    let (a, on_a) = replica_with(&url, &key, &["--trust-proxy"]).await;
    let _a = Killed(a);
    let (b, on_b) = replica_with(&url, &key, &["--trust-proxy"]).await;
    let _b = Killed(b);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let proxy_dir = dir.path().join("nginx");
    std::fs::create_dir_all(&proxy_dir).unwrap();
    let _proxy = nginx(&proxy_dir, &example_for(&[on_a.addr, on_b.addr], port));
    let front: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(front).await.is_err() {
        assert!(Instant::now() < deadline, "nginx never listened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Everything through nginx, whichever server answers.
    let browser = Browser::new(front);
    browser.sign_up("owner").await;
    let page = browser.client.get(browser.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    for _ in 0..4 {
        let (status, list) = browser.api(Method::GET, "/api/v1/graphs", None).await;
        assert_eq!(status, 200, "{list}");
    }
    let run = start_counting(&browser, 300).await;

    // The live view through nginx's websocket is the stored log, whole.
    let (seen, idle) = follow(browser.ws_request(), run.clone()).await;
    assert_eq!(idle["status"], "finished", "{idle}");
    let live: Vec<u64> = seen
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    let stored: Vec<u64> = events(&browser, &run)
        .await
        .iter()
        .map(|event| event["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(live, stored);
    assert_eq!(stored, (0..stored.len() as u64).collect::<Vec<_>>());
    assert!(stored.len() > 300);

    // nginx spread the requests over both servers (a websocket is logged
    // when it closes).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = std::fs::read_to_string(proxy_dir.join("access.log")).unwrap();
    for upstream in [on_a.addr, on_b.addr] {
        assert!(
            log.lines()
                .any(|line| line.starts_with(&upstream.to_string())),
            "{upstream} served nothing:\n{log}"
        );
    }
    assert!(
        log.lines().any(|line| line.contains("GET /api/v1/ws 101")),
        "{log}"
    );
}
