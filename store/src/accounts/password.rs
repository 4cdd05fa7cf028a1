//! argon2id hashes of passwords, computed in memory each hashing thread
//! keeps: argon2 needs 19 MiB per hash, and allocating it each time left
//! glibc's arenas holding about twenty such blocks after a log-in flood
//! (400 MiB). With one block per thread, the hashing threads hold 38 MiB
//! whatever comes. The stored form is the usual PHC string, read back by
//! any argon2 implementation.

use std::cell::RefCell;

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};

thread_local! {
    /// This thread's argon2 memory, reused by every hash it computes.
    static MEMORY: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

/// Why a hash could not be made.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    #[error("no randomness for a salt: {0}")]
    Random(String),
    #[error("argon2: {0}")]
    Argon2(String),
}

fn with_memory<T>(blocks: usize, work: impl FnOnce(&mut [Block]) -> T) -> T {
    MEMORY.with(|memory| {
        let mut memory = memory.borrow_mut();
        if memory.len() != blocks {
            memory.clear();
            memory.resize(blocks, Block::default());
        }
        work(&mut memory)
    })
}

/// A new salted argon2id hash of `password` (argon2's default cost:
/// 19 MiB, 2 passes), as a PHC string.
pub fn hash(password: &str) -> Result<String, HashError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|error| HashError::Random(error.to_string()))?;
    let params = Params::default();
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    with_memory(params.block_count(), |memory| {
        argon2.hash_password_into_with_memory(password.as_bytes(), &salt, &mut out, memory)
    })
    .map_err(|error| HashError::Argon2(error.to_string()))?;
    let argon = |error: argon2::password_hash::Error| HashError::Argon2(error.to_string());
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(argon)?,
        salt: Some(Salt::new(&salt).map_err(|e| HashError::Argon2(e.to_string()))?),
        hash: Some(Output::new(&out).map_err(|e| HashError::Argon2(e.to_string()))?),
    };
    Ok(phc.to_string())
}

/// Whether `password` matches `stored` (a PHC string); a malformed one
/// matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    let Ok(phc) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&phc.salt, &phc.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) = (
        Algorithm::try_from(phc.algorithm.as_str()),
        Params::try_from(&phc),
    ) else {
        return false;
    };
    let version = match phc.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(version)) => version,
        Some(Err(_)) => return false,
    };
    let argon2 = Argon2::new(algorithm, version, params.clone());
    let mut out = vec![0u8; expected.as_ref().len()];
    let computed = with_memory(params.block_count(), |memory| {
        argon2.hash_password_into_with_memory(password.as_bytes(), salt, &mut out, memory)
    });
    // `Output` compares in constant time.
    computed.is_ok() && Output::new(&out).is_ok_and(|out| &out == expected)
}

#[cfg(test)]
mod tests {
    use argon2::PasswordVerifier;
    use argon2::password_hash::phc::PasswordHash;

    use super::{hash, verify};

    #[test]
    fn hashes_verify_here_and_with_the_argon2_crate() {
        let stored = hash("correct horse").unwrap();
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(verify("correct horse", &stored));
        assert!(!verify("wrong horse", &stored));
        assert!(!verify("correct horse", "not a hash"));
        // Read back by the argon2 crate's own verifier, and the other way.
        let parsed = PasswordHash::new(&stored).unwrap();
        assert!(
            argon2::Argon2::default()
                .verify_password(b"correct horse", &parsed)
                .is_ok()
        );
        use argon2::PasswordHasher;
        let theirs = argon2::Argon2::default()
            .hash_password(b"older account")
            .unwrap()
            .to_string();
        assert!(verify("older account", &theirs));
    }
}
