//! Every pack is signed by the device that wrote it (ed25519). A device's key is made once and
//! kept in its database, beside its device id and its clock: a database copied elsewhere is the
//! same device, and a key that a keyring lost would make the device's later packs look like a
//! stranger's. A folder remembers each device's key as it first saw it (`Store::sync_signers`):
//! a pack of that device signed by another key, or a change in it that claims another device, is
//! refused.

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use pinloom_store::Store;
use sha2::{Digest, Sha256};

/// What is signed: this, then the SHA-256 of the pack's header and lines.
const SIGNED_AS: &[u8] = b"pinloom pack v1\n";

/// What a team's roster is signed as: a signature over a pack is never one over a roster, nor
/// the other way round.
pub(in crate::sync) const ROSTER: &[u8] = b"pinloom team roster v1\n";

/// What a request to join a team is signed as.
pub(in crate::sync) const REQUEST: &[u8] = b"pinloom team request v1\n";

/// The message a signature covers for `bytes` signed as `label`.
fn signed_as(label: &[u8], bytes: &[u8]) -> Vec<u8> {
    let mut message = label.to_vec();
    message.extend_from_slice(&Sha256::digest(bytes));
    message
}

/// The message a pack's signature covers for `bytes`.
fn signed(bytes: &[u8]) -> Vec<u8> {
    signed_as(SIGNED_AS, bytes)
}

/// This device as a writer of packs: its id and its key.
pub(in crate::sync) struct Writer {
    pub(in crate::sync) device: String,
    pub(in crate::sync) key: DeviceKey,
}

/// The keys devices sign with in one folder: as the database remembers them, and those seen for
/// the first time in this reading (to be remembered).
#[derive(Debug, Default)]
pub(in crate::sync) struct Signers {
    pub(in crate::sync) known: std::collections::HashMap<String, String>,
    pub(in crate::sync) new: Vec<(String, String)>,
    /// In a team's folder with a roster: the devices removed from it, each with the packs of
    /// theirs its owner had read when removing them. No device is taken on first sight there.
    pub(in crate::sync) removed: Option<std::collections::HashMap<String, Vec<String>>>,
    /// Whether the device behind each record is kept (a team's folder, where members change only
    /// what they wrote).
    pub(in crate::sync) authored: bool,
}

impl Signers {
    /// The keys the folder of target `name` holds devices to, `writer`'s own device held to its
    /// own key whatever the folder says.
    pub(in crate::sync) fn of(
        store: &Store,
        name: &str,
        writer: &Writer,
    ) -> anyhow::Result<Signers> {
        let mut known = store.sync_signers(name)?;
        known.insert(writer.device.clone(), writer.key.public());
        Ok(Signers { known, new: Vec::new(), removed: None, authored: false })
    }

    /// Whether pack `pack` of `device` signed by `signer` may be read: the first key a device
    /// shows is its key from then on; in a team with a roster, the roster's key, and only
    /// while the device is a member (or the pack was read as its before it was removed).
    pub(in crate::sync) fn admit(
        &mut self,
        device: &str,
        signer: &str,
        pack: &str,
    ) -> Result<(), String> {
        if let Some(removed) = &self.removed {
            if let Some(kept) = removed.get(device)
                && !kept.iter().any(|id| id == pack)
            {
                return Err(format!(
                    "device {device} was removed from the team, and this pack is not one its owner had read from it before; not read"
                ));
            }
            if !self.known.contains_key(device) {
                return Err(format!(
                    "device {device} is not a member of the team (its roster, signed by the team's owner, does not name it); not read"
                ));
            }
        }
        match self.known.get(device) {
            Some(key) if key == signer => Ok(()),
            Some(_) => Err(format!(
                "it is signed by another key than the one device {device} signs with (another machine writing under its name); not read"
            )),
            None => {
                self.known.insert(device.to_owned(), signer.to_owned());
                self.new.push((device.to_owned(), signer.to_owned()));
                Ok(())
            }
        }
    }
}

/// The key this device signs its packs with.
pub(in crate::sync) struct DeviceKey(SigningKey);

impl DeviceKey {
    /// This database's key, made on first use.
    pub(in crate::sync) fn of(store: &Store) -> anyhow::Result<DeviceKey> {
        if let Some(secret) = store.sync_signing_key()?
            && let Some(bytes) = from_hex::<32>(&secret)
        {
            return Ok(DeviceKey(SigningKey::from_bytes(&bytes)));
        }
        let key = SigningKey::generate(&mut rand_core::OsRng);
        store.set_sync_signing_key(&to_hex(&key.to_bytes()))?;
        Ok(DeviceKey(key))
    }

    /// A key from fixed bytes, for tests.
    #[cfg(test)]
    pub(in crate::sync) fn from_seed(seed: u8) -> DeviceKey {
        DeviceKey(SigningKey::from_bytes(&[seed; 32]))
    }

    /// Its public half, as a pack's header names it.
    pub(in crate::sync) fn public(&self) -> String {
        to_hex(self.0.verifying_key().as_bytes())
    }

    /// The signature of `bytes`, in hex.
    pub(in crate::sync) fn sign(&self, bytes: &[u8]) -> String {
        to_hex(&self.0.sign(&signed(bytes)).to_bytes())
    }

    /// The signature of `bytes` as `label` (a roster, a request to join), in hex.
    pub(in crate::sync) fn sign_as(&self, label: &[u8], bytes: &[u8]) -> String {
        to_hex(&self.0.sign(&signed_as(label, bytes)).to_bytes())
    }
}

/// Whether `signature` (hex) is `signer`'s (hex) over a pack's `bytes`; why not, in words.
pub(in crate::sync) fn verify(signer: &str, bytes: &[u8], signature: &str) -> Result<(), String> {
    verify_as(SIGNED_AS, signer, bytes, signature)
}

/// Whether `signature` (hex) is `signer`'s (hex) over `bytes` signed as `label`.
pub(in crate::sync) fn verify_as(
    label: &[u8],
    signer: &str,
    bytes: &[u8],
    signature: &str,
) -> Result<(), String> {
    let key = from_hex::<32>(signer)
        .and_then(|key| VerifyingKey::from_bytes(&key).ok())
        .ok_or("it names no signing key")?;
    let signature = from_hex::<64>(signature).ok_or("its signature is not one")?;
    key.verify(&signed_as(label, bytes), &Signature::from_bytes(&signature)).map_err(|_| {
        "its signature does not cover what it holds: changed since it was signed".into()
    })
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 || !text.is_ascii() {
        return None;
    }
    let mut bytes = [0; N];
    for (index, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[index * 2..index * 2 + 2], 16).ok()?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_covers_every_byte_and_names_its_key() {
        let key = DeviceKey::from_seed(7);
        let signature = key.sign(b"a pack's bytes");
        assert!(verify(&key.public(), b"a pack's bytes", &signature).is_ok());
        assert!(verify(&key.public(), b"a pack's bytez", &signature).is_err());
        let other = DeviceKey::from_seed(8);
        assert!(verify(&other.public(), b"a pack's bytes", &signature).is_err());
        assert!(verify("not hex", b"a pack's bytes", &signature).is_err());
        assert!(verify(&key.public(), b"a pack's bytes", "00").is_err());
    }
}
