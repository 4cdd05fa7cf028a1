//! Who is asking: a request's caller (nobody, a session's user, or an
//! API key) and what a key grants. Every access decision starts from one;
//! they sit below the modules that make them (accounts, API keys) and the
//! one that judges them (access).

use heddle_wire::accounts::User;
use heddle_wire::api_keys::KeyScope;
use heddle_wire::graphs::GraphId;

/// Who made a request: nobody, a logged-in user, or an API key (only on
/// the JSON API; see `server::auth::identify`).
#[derive(Clone, Debug, Default)]
pub enum Caller {
    #[default]
    Nobody,
    User(User),
    Key(std::sync::Arc<KeyGrant>),
}

impl Caller {
    /// The user logged in with a session; `None` for nobody and for a
    /// key (a key never stands in for a session).
    pub fn session_user(&self) -> Option<&User> {
        match self {
            Caller::User(user) => Some(user),
            Caller::Nobody | Caller::Key(_) => None,
        }
    }
}

/// A key that works now, as the access layer uses it: who owns it, what
/// it may do, and on which graphs.
#[derive(Clone, Debug)]
pub struct KeyGrant {
    pub id: String,
    pub name: String,
    pub owner: User,
    pub scope: KeyScope,
    graphs: Vec<GraphId>,
}

impl KeyGrant {
    /// A grant as the key's row says (the API keys module reads it).
    pub(crate) fn new(
        id: String,
        name: String,
        owner: User,
        scope: KeyScope,
        graphs: Vec<GraphId>,
    ) -> KeyGrant {
        KeyGrant {
            id,
            name,
            owner,
            scope,
            graphs,
        }
    }

    /// Whether the key names this graph.
    pub fn covers(&self, graph: &GraphId) -> bool {
        self.graphs.contains(graph)
    }

    /// The graphs it names.
    pub fn graphs(&self) -> &[GraphId] {
        &self.graphs
    }
}
