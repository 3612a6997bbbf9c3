//! Salted SHA-256 of a token's secret: the only form in which it is stored.

use rand::RngCore;
use sha2::{Digest, Sha256};

pub struct SecretHash {
    pub salt: Vec<u8>,
    pub hash: Vec<u8>,
}

impl SecretHash {
    pub fn new(secret: &str) -> Self {
        let mut salt = vec![0u8; 16];
        rand::rng().fill_bytes(&mut salt);
        let hash = digest(&salt, secret);
        Self { salt, hash }
    }
}

fn digest(salt: &[u8], secret: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(salt);
    h.update(secret.as_bytes());
    h.finalize().to_vec()
}

/// Constant-time comparison of a presented secret with a stored hash.
pub fn verify_secret(secret: &str, salt: &[u8], hash: &[u8]) -> bool {
    let actual = digest(salt, secret);
    actual.len() == hash.len() && actual.iter().zip(hash).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_only_the_same_secret_and_salts_differ() {
        let a = SecretHash::new("s3cret");
        let b = SecretHash::new("s3cret");
        assert_ne!(a.salt, b.salt);
        assert_ne!(a.hash, b.hash);
        assert!(verify_secret("s3cret", &a.salt, &a.hash));
        assert!(!verify_secret("s3cret!", &a.salt, &a.hash));
        assert!(!verify_secret("s3cret", &b.salt, &a.hash));
    }
}
