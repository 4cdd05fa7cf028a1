//! Where in a config a form field reads and writes: a path of keys and
//! list indexes, and the two operations the form needs on it.

use serde_json::{Map, Value};

/// One step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A path into a config, from its root.
pub type Path = Vec<Step>;

/// The path appended with `step`.
pub fn join(path: &Path, step: Step) -> Path {
    let mut path = path.clone();
    path.push(step);
    path
}

/// The path as a field name: `routes.0.when`.
pub fn name(path: &Path) -> String {
    path.iter()
        .map(|step| match step {
            Step::Key(key) => key.clone(),
            Step::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether the path is a route's name in a list of routes:
/// `<list>[i].route` (a router's routes, an agent's handoffs).
pub fn names_a_route(path: &Path) -> bool {
    matches!(
        path.as_slice(),
        [Step::Key(_), Step::Index(_), Step::Key(key)] if key == "route"
    )
}

/// The value at `path`, if there is one.
pub fn get<'a>(root: &'a Value, path: &Path) -> Option<&'a Value> {
    path.iter().try_fold(root, |value, step| match step {
        Step::Key(key) => value.get(key),
        Step::Index(i) => value.get(*i),
    })
}

/// Writes `value` at `path`, making the objects and lists on the way; with
/// `None`, removes what is there (a key from its object, an item from its
/// list).
pub fn set(root: &mut Value, path: &Path, value: Option<Value>) {
    let Some((last, parents)) = path.split_last() else {
        if let Some(value) = value {
            *root = value;
        }
        return;
    };
    let mut here = root;
    for (step, next) in parents.iter().zip(path.iter().skip(1)) {
        here = match step {
            Step::Key(key) => {
                if !here.is_object() {
                    *here = Value::Object(Map::new());
                }
                let Some(object) = here.as_object_mut() else {
                    return;
                };
                object.entry(key.clone()).or_insert_with(|| empty_for(next))
            }
            Step::Index(i) => match here.get_mut(*i) {
                Some(item) => item,
                None => return,
            },
        };
    }
    match (last, value) {
        (Step::Key(key), Some(value)) => {
            if !here.is_object() {
                *here = Value::Object(Map::new());
            }
            if let Some(object) = here.as_object_mut() {
                object.insert(key.clone(), value);
            }
        }
        (Step::Key(key), None) => {
            if let Some(object) = here.as_object_mut() {
                object.remove(key);
            }
        }
        (Step::Index(i), Some(value)) => {
            if !here.is_array() {
                *here = Value::Array(Vec::new());
            }
            if let Some(list) = here.as_array_mut() {
                match list.get_mut(*i) {
                    Some(item) => *item = value,
                    None => list.push(value),
                }
            }
        }
        (Step::Index(i), None) => {
            if let Some(list) = here.as_array_mut()
                && *i < list.len()
            {
                list.remove(*i);
            }
        }
    }
}

fn empty_for(next: &Step) -> Value {
    match next {
        Step::Key(_) => Value::Object(Map::new()),
        Step::Index(_) => Value::Array(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Step, get, name, set};

    #[test]
    fn reads_writes_and_removes_along_a_path() {
        let mut config = json!({});
        let when = vec![
            Step::Key("routes".into()),
            Step::Index(0),
            Step::Key("when".into()),
        ];
        set(
            &mut config,
            &vec![Step::Key("routes".into()), Step::Index(0)],
            Some(json!({"route": "a"})),
        );
        set(&mut config, &when, Some(json!("count > 2")));
        assert_eq!(
            config,
            json!({"routes": [{"route": "a", "when": "count > 2"}]})
        );
        assert_eq!(get(&config, &when), Some(&json!("count > 2")));
        assert_eq!(name(&when), "routes.0.when");
        set(&mut config, &when, None);
        assert_eq!(config, json!({"routes": [{"route": "a"}]}));
        set(
            &mut config,
            &vec![Step::Key("routes".into()), Step::Index(0)],
            None,
        );
        assert_eq!(config, json!({"routes": []}));
        // A path through something missing writes nothing.
        set(
            &mut config,
            &vec![
                Step::Key("routes".into()),
                Step::Index(3),
                Step::Key("x".into()),
            ],
            Some(json!(1)),
        );
        assert_eq!(config, json!({"routes": []}));
    }
}
