//! Secrets encrypted at rest: ChaCha20-Poly1305 under a server key, with a
//! fresh random nonce per value and the owner and name as associated data
//! (a value copied to another user's row or name does not decrypt). The
//! stored form is `v1:` and the hex of nonce and ciphertext. A copy of the
//! database alone reveals no secret; the key lives outside it (a file made
//! with mode 0600, or `HEDDLE_SECRET_KEY`).

use std::path::Path;
use std::sync::Arc;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

use heddle_wire::AppError;

const PREFIX: &str = "v1:";
const NONCE_BYTES: usize = 12;

/// The key secrets are encrypted with.
#[derive(Clone)]
pub struct SecretKey(Arc<ChaCha20Poly1305>);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(…)")
    }
}

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key text is not 64 hex digits.
    #[error("the secret key must be 64 hex digits (32 bytes)")]
    Malformed,
    /// The key file could not be read or made.
    #[error("cannot use the key file {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// No randomness for a new key.
    #[error("cannot make a random key: {0}")]
    Random(String),
}

impl SecretKey {
    fn from_bytes(bytes: &[u8; 32]) -> SecretKey {
        SecretKey(Arc::new(ChaCha20Poly1305::new(Key::from_slice(bytes))))
    }

    /// A new random key, kept nowhere: for tests and programs whose
    /// secrets need not outlive them.
    pub fn ephemeral() -> Result<SecretKey, KeyError> {
        Ok(SecretKey::from_bytes(&random::<32>()?))
    }

    /// A key from 64 hex digits.
    pub fn from_hex(text: &str) -> Result<SecretKey, KeyError> {
        let bytes = decode_hex(text.trim()).ok_or(KeyError::Malformed)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| KeyError::Malformed)?;
        Ok(SecretKey::from_bytes(&bytes))
    }

    /// The key in `path`, made there (readable by its owner only) when
    /// the file does not exist.
    pub fn load_or_create(path: &Path) -> Result<SecretKey, KeyError> {
        let file_error = |source| KeyError::File {
            path: path.display().to_string(),
            source,
        };
        match std::fs::read_to_string(path) {
            Ok(text) => SecretKey::from_hex(&text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(file_error)?;
                }
                let bytes = random::<32>()?;
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                let mut file = options.open(path).map_err(file_error)?;
                std::io::Write::write_all(&mut file, encode_hex(&bytes).as_bytes())
                    .map_err(file_error)?;
                Ok(SecretKey::from_bytes(&bytes))
            }
            Err(error) => Err(file_error(error)),
        }
    }

    /// The stored form of `value`, the secret `name` of `user_id`.
    pub(super) fn seal(&self, user_id: &str, name: &str, value: &str) -> Result<String, AppError> {
        let nonce = random::<NONCE_BYTES>().map_err(|error| {
            tracing::error!(%error, "no randomness for a secret's nonce");
            AppError::Internal
        })?;
        let aad = associated(user_id, name);
        let sealed = self
            .0
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: value.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| AppError::Internal)?;
        let mut stored = Vec::with_capacity(NONCE_BYTES + sealed.len());
        stored.extend_from_slice(&nonce);
        stored.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", encode_hex(&stored)))
    }

    /// The value of a stored secret; `None` when it is not one this key
    /// sealed (another key, a changed row).
    pub(super) fn open(&self, user_id: &str, name: &str, stored: &str) -> Option<String> {
        let bytes = decode_hex(stored.strip_prefix(PREFIX)?)?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let aad = associated(user_id, name);
        let plain = self
            .0
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: &aad,
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }

    /// Whether a stored value is sealed (rows from before encryption are
    /// not, and are sealed at start).
    pub(super) fn is_sealed(stored: &str) -> bool {
        stored.starts_with(PREFIX)
    }
}

fn associated(user_id: &str, name: &str) -> Vec<u8> {
    format!("heddle-secret\0{user_id}\0{name}").into_bytes()
}

fn random<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|error| KeyError::Random(error.to_string()))?;
    Ok(bytes)
}

fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::SecretKey;

    #[test]
    fn values_round_trip_only_for_their_row_and_key() {
        let key = SecretKey::ephemeral().unwrap();
        let stored = key.seal("u1", "openai", "sk-123").unwrap();
        assert!(!stored.contains("sk-123"));
        assert_eq!(key.open("u1", "openai", &stored).as_deref(), Some("sk-123"));
        assert_eq!(key.open("u2", "openai", &stored), None);
        assert_eq!(key.open("u1", "other", &stored), None);
        let other = SecretKey::ephemeral().unwrap();
        assert_eq!(other.open("u1", "openai", &stored), None);
        // Two seals of one value differ (fresh nonces).
        assert_ne!(stored, key.seal("u1", "openai", "sk-123").unwrap());
    }

    #[test]
    fn a_key_file_is_made_once_owner_only_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/heddle.key");
        let first = SecretKey::load_or_create(&path).unwrap();
        let stored = first.seal("u", "n", "v").unwrap();
        let again = SecretKey::load_or_create(&path).unwrap();
        assert_eq!(again.open("u", "n", &stored).as_deref(), Some("v"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(SecretKey::from_hex("nothex").is_err());
    }
}
