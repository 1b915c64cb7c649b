//! The one place callus computes digests: SHA-256 and its hex, and the keyed digests of
//! commands and tool inputs that the store keeps instead of the raw text.
//!
//! Plain SHA-256 (`sha256_hex`) is for content that is not secret: layer content hashes, the
//! audit chain, trace ids, install ids, scope fingerprints.
//!
//! A plain SHA-256 of a command is a password oracle: the digest stored for
//! `PGPASSWORD=hunter2 psql` gave the password back against a small wordlist (issue 15).
//! So a command digest is `HMAC-SHA256(key, redact(text))`, lowercase hex, with both defences:
//!
//! - **Redacted text only.** Whatever redaction masks is gone before hashing, so even with
//!   the key a guess at a masked secret cannot be confirmed; two commands that differ only
//!   in a secret share a digest, which is what grouping wants anyway.
//! - **A per-install key.** `digest.key` beside the store (32 random bytes as hex, created
//!   0600 at first use, never written anywhere else): a digest that leaves the machine (an
//!   export, the team store) cannot be checked against guesses of the parts redaction
//!   missed. Digests from different installs therefore never agree; nothing compares them
//!   (rows are joined on `tool_use_id`, the digest only within one store).
//!
//! Creating the key is race-free: it is written to a private temporary file and linked
//! into place, so concurrent first hooks agree on one key. When the key cannot be read or
//! created the digest is left out (`None`): the digest is optional metadata and a hook
//! never fails for it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) use sha2::{Digest, Sha256};

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
#[must_use]
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The key file's name, beside the store.
pub(crate) const KEY_FILE: &str = "digest.key";

const BLOCK: usize = 64;

/// `HMAC-SHA256(key, message)` (RFC 2104).
#[must_use]
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The keyed digest of `text` for the store whose key lives in `dir`, or `None` when the
/// key is unavailable.
#[must_use]
pub(crate) fn keyed(dir: &Path, text: &str) -> Option<String> {
    let key = key_for(dir)?;
    let clean = crate::redact::redact(text);
    Some(hex(&hmac_sha256(&key, clean.as_bytes())))
}

/// The keyed digest for the store `conn` has open (an in-memory store gets a key of its
/// own for the life of the process).
#[must_use]
pub(crate) fn keyed_for(conn: &rusqlite::Connection, text: &str) -> Option<String> {
    static EPHEMERAL: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
    if let Some(db) = conn.path().filter(|p| !p.is_empty()) {
        return keyed(Path::new(db).parent()?, text);
    }
    let key = EPHEMERAL.get_or_init(|| random_key().unwrap_or([7; 32]));
    let clean = crate::redact::redact(text);
    Some(hex(&hmac_sha256(key, clean.as_bytes())))
}

/// The key in `dir`, read once per process (and per directory).
fn key_for(dir: &Path) -> Option<[u8; 32]> {
    static CACHE: Mutex<Option<(PathBuf, [u8; 32])>> = Mutex::new(None);
    let mut cache = CACHE.lock().ok()?;
    if let Some((cached_dir, key)) = cache.as_ref()
        && cached_dir == dir
    {
        return Some(*key);
    }
    let key = load_or_create(dir)?;
    *cache = Some((dir.to_path_buf(), key));
    Some(key)
}

fn load_or_create(dir: &Path) -> Option<[u8; 32]> {
    let path = dir.join(KEY_FILE);
    if let Some(key) = read_key(&path) {
        return Some(key);
    }
    let key = random_key()?;
    // The first hook of a fresh install may run before the store (and its directory) exist.
    crate::config::ensure_private_dir(dir).ok()?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".digest.key.")
        .tempfile_in(dir)
        .ok()?;
    std::io::Write::write_all(&mut tmp, format!("{}\n", hex(&key)).as_bytes()).ok()?;
    tmp.as_file().sync_all().ok()?;
    // tempfile creates it 0600. Linking never replaces: a concurrent first writer wins and
    // everyone reads its key.
    match std::fs::hard_link(tmp.path(), &path) {
        Ok(()) => Some(key),
        Err(_) => read_key(&path),
    }
}

fn read_key(path: &Path) -> Option<[u8; 32]> {
    // The agent can put a FIFO or a device here: read it as any file the agent may write.
    let text = crate::untrusted::read(path, path.parent(), 256).ok()??;
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

fn random_key() -> Option<[u8; 32]> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).ok()?;
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_per_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn sha256_of_abc_is_the_published_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block is hashed first.
        let mac = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex(&mac),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn the_key_is_created_private_once_and_the_digest_hides_the_secret() {
        let tmp = tempfile::tempdir().unwrap();
        let a = keyed(tmp.path(), "PGPASSWORD=hunter2 psql").unwrap();
        let text = std::fs::read_to_string(tmp.path().join(KEY_FILE)).unwrap();
        assert_eq!(text.trim().len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(tmp.path().join(KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Stable for the same key, blind to the masked secret, keyed.
        assert_eq!(
            load_or_create(tmp.path()),
            read_key(&tmp.path().join(KEY_FILE))
        );
        assert_eq!(a, keyed(tmp.path(), "PGPASSWORD=other psql").unwrap());
        assert_ne!(
            a,
            keyed(tmp.path(), "PGPASSWORD=hunter2 psql -h x").unwrap()
        );
        let other = tempfile::tempdir().unwrap();
        assert_ne!(a, keyed(other.path(), "PGPASSWORD=hunter2 psql").unwrap());
        assert_ne!(a, sha256_hex(b"PGPASSWORD=hunter2 psql"));
    }

    #[test]
    fn a_missing_directory_is_created_private_for_the_key() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("fresh-home");
        assert!(keyed(&dir, "ls").is_some());
        assert!(dir.join(KEY_FILE).exists());
    }

    #[test]
    fn a_fifo_in_place_of_the_key_gives_no_digest_and_no_hang() {
        let tmp = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(tmp.path().join(KEY_FILE))
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("SKIPPED: no mkfifo");
            return;
        }
        // A blocking read would never return; the untrusted reader refuses the FIFO.
        assert_eq!(load_or_create(tmp.path()), None);
    }

    #[test]
    fn a_corrupt_key_gives_no_digest_rather_than_a_weak_one() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(KEY_FILE), "short\n").unwrap();
        assert_eq!(load_or_create(tmp.path()), None);
    }
}
