//! The ids a run gives the messages of its input that came without one,
//! `input-{run}-{field}-{item}`, and the run read back from such an id: a
//! conversation's question says which run it started, so what that run
//! did (the way it was routed, its instances) can be found again for it.

use crate::ids::RunId;

/// The id of item `item` of input field `field` of run `run`.
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) fn input_message_id(run: &RunId, field: usize, item: usize) -> String {
    format!("input-{run}-{field}-{item}")
}

/// The run whose input message `id` is, when `id` is one a run gave.
pub fn run_of_input_message(id: &str) -> Option<RunId> {
    let rest = id.strip_prefix("input-")?;
    let (rest, item) = rest.rsplit_once('-')?;
    let (run, field) = rest.rsplit_once('-')?;
    let numbered = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (numbered(item) && numbered(field) && !run.is_empty()).then(|| RunId::from(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_questions_id_names_the_run_it_started() {
        let run = RunId::from("run-84e3c821-e77e-4f7e-95c8-89c3ea5d0ff5");
        let id = input_message_id(&run, 0, 3);
        assert_eq!(run_of_input_message(&id), Some(run));
        for other in [
            "msg-run-1-0-0",
            "input-",
            "input-run-1",
            "input-run-1-0-x",
            "input--0-0",
            "",
        ] {
            assert_eq!(run_of_input_message(other), None, "{other}");
        }
    }
}
