//! The run manager as the app's server functions reach it: the store's
//! [`records::RunControl`] port, answered by this server's [`Runs`].

use std::sync::Arc;

use heddle_store::access::{Allowed, OnRun, OnThread};
use heddle_store::runs as records;
use heddle_wire::runs::{ForkRequest, RunInfo, StartRequest, ThreadView};
use serde_json::Value;

use super::Runs;

/// The run manager as the app's server functions reach it.
impl records::RunControl for Runs {
    fn start<'a>(
        &'a self,
        allowed: &'a Allowed,
        request: StartRequest,
    ) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::start(self, allowed, request))
    }

    fn get<'a>(&'a self, run: &'a OnRun) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::get(self, run))
    }

    fn cancel<'a>(&'a self, run: &'a OnRun) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::cancel(self, run))
    }

    fn fork<'a>(&'a self, run: &'a OnRun, request: ForkRequest) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::fork(self, run, request))
    }

    fn events<'a>(
        &'a self,
        run: &'a OnRun,
        from_seq: u64,
    ) -> records::RunFuture<'a, Vec<Arc<heddle_engine::run::Event>>> {
        Box::pin(Runs::events(self, run, from_seq))
    }

    fn base_state<'a>(
        &'a self,
        run: &'a OnRun,
        checkpoint: &'a str,
    ) -> records::RunFuture<'a, Option<serde_json::Map<String, Value>>> {
        Box::pin(Runs::base_state(self, run.run_id(), checkpoint))
    }

    fn thread<'a>(&'a self, thread: &'a OnThread) -> records::RunFuture<'a, ThreadView> {
        Box::pin(Runs::thread(self, thread))
    }

    fn resume<'a>(&'a self, thread: &'a OnThread, value: Value) -> records::RunFuture<'a, RunInfo> {
        Box::pin(Runs::resume(self, thread, value))
    }

    fn stop_all<'a>(&'a self, allowed: &'a Allowed) -> records::RunFuture<'a, ()> {
        Box::pin(Runs::stop_all(self, allowed))
    }

    fn version_to_run<'a>(
        &'a self,
        allowed: &'a Allowed,
        version: Option<i64>,
    ) -> records::RunFuture<'a, i64> {
        Box::pin(Runs::version_to_run(self, allowed, version))
    }

    fn model_names(&self) -> Vec<String> {
        self.inner.registry.model_names()
    }
}
