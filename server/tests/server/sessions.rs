//! Sessions and links over time: logging out ends access (open sockets
//! included), a revoked link ends access at once, an expired link says so,
//! log-in renews the session id and is rate limited, a password change
//! ends the other sessions, closed sign-up, and the per-user run limit.

use reqwest::Method;
use serde_json::json;

use crate::access::{next_message, open_socket, send_message};
use crate::api_runs::counting_loop;
use crate::support::{Browser, PASSWORD, TestServer, error_message};

/// The value of the `heddle_session` cookie a browser holds.
fn session_cookie(browser: &Browser) -> String {
    browser
        .cookie()
        .split("; ")
        .find_map(|pair| pair.strip_prefix("heddle_session="))
        .unwrap_or_default()
        .to_string()
}

async fn share_with(server: &TestServer, graph: &str, role: &str, who: &Browser) -> String {
    let (status, link) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": role})),
        )
        .await;
    assert_eq!(status, 201, "{link}");
    let token = link["path"].as_str().unwrap().trim_start_matches("/share/");
    let (status, body) = who
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert_eq!(status, 200, "{body}");
    link["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn logging_out_ends_access_and_the_old_cookie_is_worthless() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    let cookie = server.owner.cookie();
    let mut socket = open_socket(&server.owner).await.expect("socket");
    send_message(
        &mut socket,
        json!({"type": "watch_graph", "graph_id": graph}),
    )
    .await;

    let (status, _) = server.api(Method::POST, "/api/v1/auth/logout", None).await;
    assert_eq!(status, 204);
    let (status, body) = server.api(Method::GET, "/api/v1/graphs", None).await;
    assert_eq!(status, 401);
    assert_eq!(error_message(&body), "log in to do this");
    // Replaying the cookie from before the log-out does not help.
    let replay = reqwest::Client::new()
        .get(server.url(&format!("/api/v1/graphs/{graph}")))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 401);
    // The socket opened in that session is closed by the server.
    assert_eq!(next_message(&mut socket).await, None, "the socket closes");
}

#[tokio::test]
async fn a_revoked_link_ends_access_at_once_also_for_open_sockets() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(100_000_000)).await;
    let teammate = server.user("tess").await;
    let link = share_with(&server, &graph, "viewer", &teammate).await;
    let (status, _) = teammate
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 200);

    // A long run the teammate watches live.
    let (status, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": 100_000_000}})),
        )
        .await;
    assert_eq!(status, 202);
    let run_id = run["id"].as_str().unwrap();
    let mut socket = open_socket(&teammate).await.expect("socket");
    send_message(
        &mut socket,
        json!({"type": "subscribe", "run_id": run_id, "from_seq": 0}),
    )
    .await;
    loop {
        let message = next_message(&mut socket).await.expect("events flow");
        if message["type"] == "event" {
            break;
        }
    }

    let (status, _) = server
        .api(
            Method::DELETE,
            &format!("/api/v1/graphs/{graph}/links/{link}"),
            None,
        )
        .await;
    assert_eq!(status, 204);
    // The socket hears it (after any events already in flight)...
    let revoked = loop {
        let message = next_message(&mut socket).await.expect("socket open");
        if message["type"] == "access_revoked" {
            break message;
        }
    };
    assert_eq!(revoked["run_id"], run_id);
    assert_eq!(revoked["message"], "your access to this graph ended");
    // ...and so does every request, saying so.
    let (status, _) = teammate
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 410);
    let (_, list) = teammate.api(Method::GET, "/api/v1/graphs", None).await;
    assert_eq!(list, json!([]));
    // Opening the link again says what happened.
    let (_, sharing) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/sharing"),
            None,
        )
        .await;
    let path = sharing["links"][0]["path"].as_str().unwrap();
    assert_eq!(sharing["links"][0]["revoked"], true);
    let (status, body) = teammate
        .api(Method::POST, &format!("/api/v1{path}"), None)
        .await;
    assert_eq!(status, 410);
    assert!(error_message(&body).contains("revoked"), "{body}");
    server
        .api(Method::POST, &format!("/api/v1/runs/{run_id}/cancel"), None)
        .await;
}

#[tokio::test]
async fn an_expired_link_says_so_and_ends_the_access_it_gave() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(1)).await;
    let early = server.user("early").await;
    let link = share_with(&server, &graph, "editor", &early).await;
    let (_, sharing) = server
        .api(
            Method::GET,
            &format!("/api/v1/graphs/{graph}/sharing"),
            None,
        )
        .await;
    let path = sharing["links"][0]["path"].as_str().unwrap().to_string();

    heddle_store::on_db!(&server.db().await, pool => sqlx::query("UPDATE share_links SET expires_at = '2026-01-02T03:04:05.000Z' WHERE id = $1")
        .bind(&link)
        .execute(pool)
        .await
        .map(|_| ()))
    .unwrap();

    let late = server.user("late").await;
    let (status, body) = late
        .api(Method::POST, &format!("/api/v1{path}"), None)
        .await;
    assert_eq!(status, 410);
    assert_eq!(
        error_message(&body),
        "this share link expired on 2026-01-02 03:04 UTC; ask the graph's owner for a new one"
    );
    let (status, body) = early
        .api(Method::GET, &format!("/api/v1/graphs/{graph}"), None)
        .await;
    assert_eq!(status, 410, "the access it gave ended with it");
    assert!(
        error_message(&body).contains("the share link you opened has expired"),
        "{body}"
    );
    // The page says it too, with the same status.
    let page = late.client.get(late.url(&path)).send().await.unwrap();
    assert_eq!(page.status(), 410);
    let html = page.text().await.unwrap();
    assert!(html.contains("This share link no longer works"), "{html}");
}

#[tokio::test]
async fn a_share_link_to_a_run_opens_the_run_at_its_step() {
    let server = TestServer::start().await;
    let graph = server.create_graph(counting_loop(2)).await;
    let (_, run) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": 2}})),
        )
        .await;
    let run_id = run["id"].as_str().unwrap();
    server.wait_for_run(run_id).await;
    let (status, link) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": "viewer", "run_id": run_id, "step": 2})),
        )
        .await;
    assert_eq!(status, 201, "{link}");
    let teammate = server.user("tess").await;
    // The link's page offers it; accepting it (the page's POST) says where
    // to go: the run, at its step.
    let page = teammate
        .client
        .get(teammate.url(link["path"].as_str().unwrap()))
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let token = link["path"].as_str().unwrap().trim_start_matches("/share/");
    let (status, accepted) = teammate
        .api(Method::POST, &format!("/api/v1/share/{token}"), None)
        .await;
    assert_eq!(status, 200, "{accepted}");
    assert_eq!(
        accepted["target"],
        format!("/graphs/{graph}?run={run_id}&step=2")
    );
    // A run of another graph cannot be linked.
    let other = server.create_graph(counting_loop(1)).await;
    let (status, body) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{other}/links"),
            Some(json!({"role": "viewer", "run_id": run_id})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(error_message(&body).contains("is not a run of this graph"));
}

#[tokio::test]
async fn log_in_renews_the_session_and_sets_a_careful_cookie() {
    let server = TestServer::start().await;
    let browser = server.anonymous();
    let response = browser
        .client
        .post(browser.url("/api/v1/auth/login"))
        .json(&json!({"username": "owner", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    assert!(!set_cookie.contains("Secure"), "plain http: {set_cookie}");
    let first = session_cookie(&browser);
    assert!(first.len() >= 20, "{first}");

    let (status, _) = browser
        .api(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "owner", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 200);
    let second = session_cookie(&browser);
    assert_ne!(first, second, "a log-in gets a new session id");
    let old = reqwest::Client::new()
        .get(server.url("/api/v1/auth/me"))
        .header("cookie", format!("heddle_session={first}"))
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 401, "the old id is worthless");
}

#[tokio::test]
async fn cookies_are_secure_behind_https() {
    let mut settings = heddle_server::state::Settings::default()
        .with_public_url(Some("https://heddle.example.com"));
    settings.max_runs_per_user = 4;
    let server = TestServer::start_with_settings(settings).await;
    let response = server
        .anonymous()
        .client
        .post(server.url("/api/v1/auth/login"))
        .json(&json!({"username": "owner", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(set_cookie.contains("Secure"), "{set_cookie}");
}

#[tokio::test]
async fn failed_log_ins_are_rate_limited() {
    let server = TestServer::start().await;
    let browser = server.anonymous();
    for _ in 0..5 {
        let (status, body) = browser
            .api(
                Method::POST,
                "/api/v1/auth/login",
                Some(json!({"username": "owner", "password": "wrong password"})),
            )
            .await;
        assert_eq!(status, 401);
        assert_eq!(error_message(&body), "wrong username or password");
    }
    let (status, body) = browser
        .api(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "OWNER", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 429, "even the right password waits: {body}");
    assert!(error_message(&body).starts_with("too many log-in attempts for this username"));
}

/// A log-in form the browser posts itself (pressed before the page's
/// script ran) goes back to the form with the error in its address, where
/// the form shows it; it showed the error's raw JSON before.
#[tokio::test]
async fn a_log_in_form_posted_without_the_script_goes_back_to_the_form_with_its_error() {
    let server = TestServer::start().await;
    let browser = server.anonymous();
    let form = |password: &'static str| {
        browser
            .client
            .post(browser.url("/api/log_in"))
            .header("accept", "text/html")
            .header("referer", browser.url("/login?next=/"))
            .form(&[("username", "owner"), ("password", password), ("next", "/")])
            .send()
    };
    let refused = form("wrong password").await.unwrap();
    assert_eq!(refused.status(), 302);
    let back = refused.headers()["location"].to_str().unwrap().to_string();
    assert!(
        back.starts_with(&browser.url("/login?next=/&__path=")),
        "{back}"
    );
    assert!(back.contains("&__err="), "{back}");
    // The form's page, at that address, says why.
    let page = browser.client.get(&back).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .unwrap()
            .contains("wrong username or password")
    );

    let let_in = form(PASSWORD).await.unwrap();
    assert_eq!(let_in.status(), 302);
    assert_eq!(let_in.headers()["location"], "/");
}

#[tokio::test]
async fn changing_the_password_ends_the_other_sessions() {
    let server = TestServer::start().await;
    let laptop = server.anonymous();
    let (status, _) = laptop
        .api(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "owner", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = server
        .api(
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"current": "nope nope", "new": "a brand new one"})),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_message(&body), "the current password is wrong");
    let (status, _) = server
        .api(
            Method::POST,
            "/api/v1/auth/password",
            Some(json!({"current": PASSWORD, "new": "a brand new one"})),
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        server.api(Method::GET, "/api/v1/auth/me", None).await.0,
        200
    );
    assert_eq!(
        laptop.api(Method::GET, "/api/v1/auth/me", None).await.0,
        401
    );
    let (status, _) = laptop
        .api(
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "owner", "password": "a brand new one"})),
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn closed_sign_up_lets_in_only_the_owner_and_link_holders() {
    let mut settings = heddle_server::state::Settings::default();
    settings.signup = heddle_store::accounts::SignupPolicy::Closed;
    let server = TestServer::start_with_settings(settings).await;
    let graph = server.create_graph(counting_loop(1)).await;
    let stranger = server.anonymous();
    let (status, body) = stranger
        .api(
            Method::POST,
            "/api/v1/auth/signup",
            Some(json!({"username": "mallory", "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, 403);
    assert!(
        error_message(&body).starts_with("sign-up is closed"),
        "{body}"
    );
    let (_, link) = server
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/links"),
            Some(json!({"role": "viewer"})),
        )
        .await;
    let token = link["path"].as_str().unwrap().trim_start_matches("/share/");
    let invited = server.anonymous();
    let (status, body) = invited
        .api(
            Method::POST,
            "/api/v1/auth/signup",
            Some(json!({"username": "ivy", "password": PASSWORD, "invite": token})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn the_first_account_owns_the_graphs_made_before_accounts() {
    // A database from before accounts: a graph with no owner.
    let dir = tempfile::tempdir().unwrap();
    let url = crate::support::test_database(dir.path()).await;
    let pool = heddle_store::db::open::connect(&url).await.unwrap();
    heddle_store::on_db!(&pool, pool => sqlx::query("INSERT INTO graphs (id, name, graph_json) VALUES ('3f2a0000-0000-4000-8000-000000000000', 'old', '{}')")
        .execute(pool)
        .await
        .map(|_| ()))
        .unwrap();
    let auth = heddle_store::accounts::Auth::new(heddle_store::accounts::SignupPolicy::Open, &pool);
    let first = heddle_store::accounts::create_user(&pool, &auth, "first", PASSWORD)
        .await
        .unwrap();
    let second = heddle_store::accounts::create_user(&pool, &auth, "second", PASSWORD)
        .await
        .unwrap();
    let mine = heddle_store::graphs::list(&pool, &first).await.unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].owner, "first");
    assert!(
        heddle_store::graphs::list(&pool, &second)
            .await
            .unwrap()
            .is_empty()
    );
    let taken = heddle_store::accounts::create_user(&pool, &auth, "FIRST", PASSWORD).await;
    assert_eq!(
        taken.unwrap_err().to_string(),
        "the username `FIRST` is taken"
    );
}

#[tokio::test]
async fn runs_per_user_are_limited() {
    let mut settings = heddle_server::state::Settings::default();
    settings.max_runs_per_user = 1;
    let server = TestServer::start_with_settings(settings).await;
    let graph = server.create_graph(counting_loop(100_000_000)).await;
    let runs = format!("/api/v1/graphs/{graph}/runs");
    let start = || {
        server.api(
            Method::POST,
            &runs,
            Some(json!({"input": {"target": 100_000_000}})),
        )
    };
    let (status, run) = start().await;
    assert_eq!(status, 202);
    let (status, body) = start().await;
    assert_eq!(status, 429);
    assert!(
        error_message(&body).contains("the limit is 1 per user"),
        "{body}"
    );
    // Someone else is not held back by it.
    let teammate = server.user("tess").await;
    server
        .api(
            Method::PUT,
            &format!("/api/v1/graphs/{graph}/members/tess"),
            Some(json!({"role": "editor"})),
        )
        .await;
    let (status, other) = teammate
        .api(
            Method::POST,
            &format!("/api/v1/graphs/{graph}/runs"),
            Some(json!({"input": {"target": 100_000_000}})),
        )
        .await;
    assert_eq!(status, 202, "{other}");
    assert_eq!(other["started_by"], "tess");
    for id in [&run["id"], &other["id"]] {
        server
            .api(
                Method::POST,
                &format!("/api/v1/runs/{}/cancel", id.as_str().unwrap()),
                None,
            )
            .await;
    }
}
