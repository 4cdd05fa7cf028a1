//! Accounts: who is logged in (users and their ids), and the rules the
//! log-in, sign-up and password forms and the server share.
//!
//! The first visitor of a fresh server creates the owner account in one
//! step (and claims any graph made before accounts existed). After that,
//! sign-up is open unless the server runs with `HEDDLE_SIGNUP=closed`, in
//! which case only someone holding a valid share link can make an account.

use serde::{Deserialize, Serialize};

/// A user's id: a UUID.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct UserId(String);

impl UserId {
    /// An id as the database holds it; unchecked.
    pub fn from_stored(text: String) -> UserId {
        UserId(text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A logged-in user, as pages and checks see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct User {
    pub id: UserId,
    pub username: String,
}

/// What the log-in page needs to know.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthStatus {
    /// Nobody has an account yet: the page offers to create the owner's.
    pub needs_setup: bool,
    /// Anyone may sign up (otherwise only with a share link).
    pub signup_open: bool,
    /// Who is logged in, if anyone.
    pub user: Option<User>,
}

/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;

/// The longest password accepted (hashing cost stays bounded).
pub const MAX_PASSWORD_CHARS: usize = 256;

/// `next` if it is a path on this site, else `/`: a log-in link can never
/// send anyone elsewhere.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && !path.chars().any(char::is_control) =>
        {
            path.to_string()
        }
        _ => "/".to_string(),
    }
}

/// Percent-encodes `text` for a URL's query (everything but unreserved
/// characters and `/`).
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/graphs/x")), "/graphs/x");
        for bad in [
            "https://evil.example",
            "//evil.example",
            "/\\evil",
            "graphs",
            "",
        ] {
            assert_eq!(safe_next(Some(bad)), "/", "{bad}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
