//! Sharing a graph: the owner grants teammates a role by username, or makes
//! share links (a role, an optional expiry, optionally a run and a step to
//! open). Opening a link while logged in grants its role for as long as
//! the link lives; revoking it ends that access at once, open websockets
//! included.

use crate::access::Role;
use crate::graphs::GraphId;
use heddle_engine::ids::RunId;
use serde::{Deserialize, Serialize};

/// A share link as its owner sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShareLink {
    pub id: String,
    pub graph_id: GraphId,
    pub role: Role,
    /// The link's path on this server: `/share/<token>`.
    pub path: String,
    pub run_id: Option<RunId>,
    pub step: Option<i64>,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub revoked: bool,
    pub expired: bool,
    /// How many people opened it.
    pub uses: i64,
}

/// Someone the owner granted a role by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Member {
    pub username: String,
    pub role: Role,
}

/// Everything the share dialog shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sharing {
    pub links: Vec<ShareLink>,
    pub members: Vec<Member>,
}

/// What a link offers, shown before it is accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkPreview {
    pub graph_name: String,
    /// The graph owner's username.
    pub owner: String,
    pub role: Role,
}

/// What opening a link granted, and where to go.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Accepted {
    pub graph_id: GraphId,
    pub role: Role,
    /// The graph's page, or its run's replay at the step.
    pub target: String,
}

/// The longest a link may live before it expires, in hours (a year).
pub const MAX_EXPIRY_HOURS: u32 = 24 * 366;

/// A role the owner may give: on a share link, or to a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    Viewer,
    Editor,
}

impl From<Grant> for Role {
    fn from(grant: Grant) -> Role {
        match grant {
            Grant::Viewer => Role::Viewer,
            Grant::Editor => Role::Editor,
        }
    }
}

/// What the owner sets a teammate's access to: a role, or none (the
/// member is removed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberAccess {
    Viewer,
    Editor,
    None,
}

impl MemberAccess {
    /// The role it grants (`None` when it removes the member).
    pub fn grant(self) -> Option<Grant> {
        match self {
            MemberAccess::Viewer => Some(Grant::Viewer),
            MemberAccess::Editor => Some(Grant::Editor),
            MemberAccess::None => None,
        }
    }
}
