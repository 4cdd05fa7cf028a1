//! What a run needs before it may start or go on: the graph compiled for
//! its starter (with the starter's secrets as credentials and saved
//! subgraphs embedded through their access checks), and who must still
//! have access when it gets its turn.

use heddle_engine::ids::RunId;
use heddle_engine::{CompiledGraph, GraphDocument, Registry};
use heddle_store::access::Allowed;
use heddle_store::accounts;
use heddle_store::graphs;
use heddle_store::runs as records;
use heddle_store::runs::EmbeddedGraph;
use heddle_store::secrets;
use heddle_wire::accounts::User;
use heddle_wire::error::AppError;
use heddle_wire::graphs::GraphDetail;
use serde_json::Value;

use super::Runs;
use crate::runs::embed;
use crate::runs::embed::Versions;

/// Who must still have access when a run starts or goes on.
pub(crate) struct Admission {
    pub(super) starter: User,
    /// The saved graphs it embeds.
    pub(super) embeds: Vec<EmbeddedGraph>,
}

impl Runs {
    /// The registry a run of `user_id` compiles with: the server's, with
    /// that user's secrets as the credentials its nodes may name.
    pub(super) async fn registry_for(&self, user_id: Option<&str>) -> Result<Registry, AppError> {
        let secrets = match user_id {
            Some(user) => secrets::values(&self.inner.db, &self.inner.secret_key, user).await?,
            None => Default::default(),
        };
        Ok(self
            .inner
            .registry
            .clone()
            .with_credentials(secrets.into_iter().collect()))
    }

    /// What a run of the graph `allowed` names needs, for its user: the
    /// graph's newest version, the registry with the user's secrets, and
    /// the graph compiled with its saved subgraphs embedded (through their
    /// access checks), with the ids of those it embeds.
    pub(super) async fn prepare(
        &self,
        allowed: &Allowed,
    ) -> Result<(GraphDetail, Registry, CompiledGraph, Vec<EmbeddedGraph>), AppError> {
        let user = allowed.user();
        let detail = graphs::get(&self.inner.db, allowed).await?;
        let registry = self.registry_for(Some(user.id.as_str())).await?;
        let embedded = embed::embed(
            &self.inner.db,
            user,
            allowed.graph(),
            &detail.document,
            &Versions::Newest,
        )
        .await?;
        let graph = compile_value(embedded.document, &registry)?;
        Ok((detail, registry, graph, embedded.graphs))
    }

    /// The same for the version `version` of the graph, with its saved
    /// subgraphs in the versions `versions` says: a queued start taken by
    /// another server runs the versions it was asked for, even if the
    /// graphs were saved again meanwhile.
    pub(super) async fn prepare_version(
        &self,
        allowed: &Allowed,
        version: i64,
        versions: &Versions,
    ) -> Result<(Registry, CompiledGraph, Vec<EmbeddedGraph>), AppError> {
        self.prepare_version_recorded(allowed, version, versions, None)
            .await
    }

    /// The same, its models and tools answered through `recording` when
    /// given (an experiment's recorded replies).
    pub(super) async fn prepare_version_recorded(
        &self,
        allowed: &Allowed,
        version: i64,
        versions: &Versions,
        recording: Option<&heddle_engine::recording::Recording>,
    ) -> Result<(Registry, CompiledGraph, Vec<EmbeddedGraph>), AppError> {
        let user = allowed.user();
        let document = graphs::version(&self.inner.db, allowed, version).await?;
        let registry = self.registry_for(Some(user.id.as_str())).await?;
        let registry = match recording {
            Some(recording) => recording.wrap(registry),
            None => registry,
        };
        let embedded =
            embed::embed(&self.inner.db, user, allowed.graph(), &document, versions).await?;
        let graph = compile_value(embedded.document, &registry)?;
        Ok((registry, graph, embedded.graphs))
    }

    /// Who a run needs access for when it goes on: its starter, and the
    /// graphs it embeds (`None` for runs from before accounts).
    pub(super) async fn admission_of(
        &self,
        run_id: &RunId,
        user_id: Option<&str>,
    ) -> Result<Option<Admission>, AppError> {
        let Some(user_id) = user_id else {
            return Ok(None);
        };
        let starter = accounts::user_by_id(&self.inner.db, user_id)
            .await?
            .ok_or_else(|| {
                AppError::Forbidden("the user who started it no longer exists".into())
            })?;
        Ok(Some(Admission {
            starter,
            embeds: records::embeds_of(&self.inner.db, run_id).await?,
        }))
    }
}

/// Reads and compiles a document with its subgraphs embedded, or says what
/// stops it from running.
pub(super) fn compile_value(
    document: Value,
    registry: &Registry,
) -> Result<CompiledGraph, AppError> {
    let document = GraphDocument::from_value(document).map_err(|error| AppError::InvalidGraph {
        message: error.to_string(),
        problems: Vec::new(),
    })?;
    compile_document(document, registry)
}

/// Compiles a document, or says what stops it from running.
fn compile_document(
    document: GraphDocument,
    registry: &Registry,
) -> Result<CompiledGraph, AppError> {
    heddle_engine::compile(&document, registry).map_err(|report| AppError::InvalidGraph {
        message: match report.errors().count() {
            1 => "the graph has a problem that stops it from running".to_string(),
            n => format!("the graph has {n} problems that stop it from running"),
        },
        problems: report.problems,
    })
}
