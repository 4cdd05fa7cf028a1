//! Stored batches of events (`run::stored_events`): a step's batches
//! compacted into one, with a node's streamed tokens as one text, read back
//! exactly as they were sent, on every store; the log goes on after a
//! compaction; a compaction that would not end the log, or would split a
//! batch, changes nothing; batches stored before versions were named still
//! read, and one of a newer version is refused in words.

use std::sync::Arc;

use heddle_engine::run::{CheckpointStore, Event, EventPayload, RunRecord, RunStatus, StoreError};
use heddle_engine::{NodeId, RunId, ThreadId};
use serde_json::json;

use crate::stores::{Sql, stores};

fn event(seq: u64, payload: EventPayload) -> Arc<Event> {
    Arc::new(Event {
        run_id: RunId::from("r"),
        seq,
        at_us: 1_700_000_000_000_000 + seq * 20_000,
        path: Vec::new(),
        payload,
    })
}

fn custom(seq: u64, node: &str, name: &str, data: serde_json::Value) -> Arc<Event> {
    event(
        seq,
        EventPayload::Custom {
            node: NodeId::from(node),
            instance: None,
            name: name.into(),
            data,
        },
    )
}

/// A step of a model streaming a reply: the step starts, two nodes stream
/// (one of them a tool call between its tokens), one token each batch.
fn a_streaming_step() -> Vec<Arc<Event>> {
    let mut events = vec![event(
        0,
        EventPayload::StepStarted {
            step: 0,
            tasks: Vec::new(),
        },
    )];
    for i in 1..=40u64 {
        let node = if i % 7 == 0 { "other" } else { "reply" };
        events.push(if i == 20 {
            custom(
                i,
                "reply",
                "tool_call",
                json!({"name": "search", "id": "c1"}),
            )
        } else {
            custom(i, node, "token", json!({"text": format!("wörd{i} ")}))
        });
    }
    events
}

async fn create(store: &dyn CheckpointStore) {
    store
        .create_run(&RunRecord {
            run_id: RunId::from("r"),
            thread_id: ThreadId::from("t"),
            graph: json!({"format_version": 2}).to_string(),
            status: RunStatus::Running,
        })
        .await
        .unwrap();
}

fn plain(events: &[Arc<Event>]) -> Vec<Event> {
    events.iter().map(|event| (**event).clone()).collect()
}

#[tokio::test]
async fn a_steps_tokens_compacted_read_back_as_they_were_sent() {
    for store in stores().await {
        let name = store.name;
        create(store.as_ref()).await;
        let step = a_streaming_step();
        for event in &step {
            store
                .append_events(std::slice::from_ref(event))
                .await
                .unwrap();
        }
        let run = RunId::from("r");
        store.compact_events(&run, 0, 40).await.unwrap();
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&step), "{name}");
        assert_eq!(
            store.events(&run, 17).await.unwrap(),
            plain(&step[17..]),
            "{name}"
        );

        // The log goes on after it, and refuses what it already holds.
        let next = custom(41, "reply", "token", json!({"text": "more"}));
        store
            .append_events(std::slice::from_ref(&next))
            .await
            .unwrap();
        let again = custom(40, "reply", "token", json!({"text": "twice"}));
        assert!(
            store
                .append_events(std::slice::from_ref(&again))
                .await
                .is_err(),
            "{name}: event 40 is stored"
        );
        let mut all = step.clone();
        all.push(next);
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&all), "{name}");

        let Some(location) = &store.location else {
            continue;
        };
        let sql = Sql::open(location).await;
        assert_eq!(sql.batches("r").await, vec![(0, 40), (41, 41)], "{name}");
        let compacted = sql.bodies("r").await;
        let one_by_one: usize = step
            .iter()
            .map(|event| serde_json::to_string(&[event]).unwrap().len())
            .sum();
        assert!(
            compacted[0].len() * 2 < one_by_one,
            "{name}: {} bytes for {one_by_one} one by one",
            compacted[0].len()
        );
        assert!(compacted[0].contains("\"protocol\":2"), "{name}");
    }
}

#[tokio::test]
async fn a_compaction_that_would_not_end_the_log_or_would_split_a_batch_changes_nothing() {
    for store in stores().await {
        let name = store.name;
        let Some(location) = store.location.clone() else {
            continue;
        };
        create(store.as_ref()).await;
        let step = a_streaming_step();
        // Batches [0,1], [2,3], ... [38,39], [40].
        for pair in step.chunks(2) {
            store.append_events(pair).await.unwrap();
        }
        let sql = Sql::open(&location).await;
        let before = sql.batches("r").await;
        let run = RunId::from("r");
        // Not the end of the log; begins inside a batch; ends inside one;
        // a single batch; past the log.
        for (first, last) in [(0, 9), (1, 40), (0, 38), (40, 40), (0, 41), (38, 45)] {
            store.compact_events(&run, first, last).await.unwrap();
            assert_eq!(sql.batches("r").await, before, "{name}: {first}..{last}");
        }
        store.compact_events(&run, 30, 40).await.unwrap();
        let after = sql.batches("r").await;
        assert_eq!(after.last(), Some(&(30, 40)), "{name}");
        assert_eq!(after.len(), 16, "{name}");
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&step), "{name}");
        // Compacting again takes in the compacted batch.
        store.compact_events(&run, 0, 40).await.unwrap();
        assert_eq!(sql.batches("r").await, vec![(0, 40)], "{name}");
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&step), "{name}");
    }
}

#[tokio::test]
async fn batches_of_the_first_protocol_read_and_compact_and_a_newer_one_is_refused() {
    for store in stores().await {
        let name = store.name;
        let Some(location) = store.location.clone() else {
            continue;
        };
        create(store.as_ref()).await;
        let step = a_streaming_step();
        let sql = Sql::open(&location).await;
        // As versions before 2 stored them: a JSON array per batch.
        for (i, event) in step.iter().enumerate().take(10) {
            let body = serde_json::to_string(&[event]).unwrap();
            sql.insert_batch("r", i as i64, i as i64, &body).await;
        }
        store.append_events(&step[10..]).await.unwrap();
        let run = RunId::from("r");
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&step), "{name}");
        store.compact_events(&run, 0, 40).await.unwrap();
        assert_eq!(sql.batches("r").await, vec![(0, 40)], "{name}");
        assert_eq!(store.events(&run, 0).await.unwrap(), plain(&step), "{name}");

        let newer = r#"{"protocol":3,"frames":"a later format"}"#;
        sql.insert_batch("r", 41, 41, newer).await;
        match store.events(&run, 0).await {
            Err(StoreError::Corrupt(message)) => assert!(
                message.contains("newer Heddle (protocol 3)"),
                "{name}: {message}"
            ),
            other => panic!("{name}: {other:?}"),
        }
    }
}

impl Sql {
    /// A run's stored batches: their first and last events, in order.
    async fn batches(&self, run: &str) -> Vec<(i64, i64)> {
        let query =
            "SELECT first_seq, last_seq FROM heddle_events WHERE run_id = $1 ORDER BY first_seq";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => sqlx::query_as(query)
                .bind(run)
                .fetch_all(pool)
                .await
                .unwrap(),
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => sqlx::query_as(query)
                .bind(run)
                .fetch_all(pool)
                .await
                .unwrap(),
        }
    }

    /// A run's stored batches' bodies, in order.
    async fn bodies(&self, run: &str) -> Vec<String> {
        let query = "SELECT body FROM heddle_events WHERE run_id = $1 ORDER BY first_seq";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => sqlx::query_scalar(query)
                .bind(run)
                .fetch_all(pool)
                .await
                .unwrap(),
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => sqlx::query_scalar(query)
                .bind(run)
                .fetch_all(pool)
                .await
                .unwrap(),
        }
    }

    /// A batch as it is, bypassing the store.
    async fn insert_batch(&self, run: &str, first: i64, last: i64, body: &str) {
        let query =
            "INSERT INTO heddle_events (run_id, first_seq, last_seq, body) VALUES ($1, $2, $3, $4)";
        match self {
            #[cfg(feature = "sqlite")]
            Sql::Sqlite(pool) => {
                sqlx::query(query)
                    .bind(run)
                    .bind(first)
                    .bind(last)
                    .bind(body)
                    .execute(pool)
                    .await
                    .unwrap();
            }
            #[cfg(feature = "postgres")]
            Sql::Postgres(pool) => {
                sqlx::query(query)
                    .bind(run)
                    .bind(first)
                    .bind(last)
                    .bind(body)
                    .execute(pool)
                    .await
                    .unwrap();
            }
        }
    }
}
