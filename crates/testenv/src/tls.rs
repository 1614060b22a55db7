//! Optional HTTPS: a freshly generated certificate authority and a serving certificate for
//! `127.0.0.1`, `localhost` (and the listening address), made at start-up and kept in memory.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::{Error, Result};

/// The server's TLS identity: its acceptor and the CA that signed its certificate.
pub(crate) struct Tls {
    pub(crate) acceptor: TlsAcceptor,
    /// The CA certificate, PEM.
    pub(crate) ca_pem: String,
    /// The CA certificate, DER.
    pub(crate) ca_der: Vec<u8>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

fn tls_error(e: impl std::fmt::Display) -> Error {
    Error::Tls(e.to_string())
}

impl Tls {
    /// Generates a CA and a serving certificate (ECDSA P-256) valid for `127.0.0.1`, `::1`,
    /// `localhost` and `host`.
    pub(crate) fn generate(host: IpAddr) -> Result<Self> {
        let ca_key = KeyPair::generate().map_err(tls_error)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kcr-testenv CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_error)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let mut names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ];
        if !host.is_unspecified() && !host.is_loopback() {
            names.push(host.to_string());
        }
        let key = KeyPair::generate().map_err(tls_error)?;
        let mut params = CertificateParams::new(names).map_err(tls_error)?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kcr-testenv");
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &issuer).map_err(tls_error)?;

        let chain = vec![cert.der().clone(), ca_cert.der().clone()];
        let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let acceptor = acceptor(chain, private)?;
        Ok(Self {
            acceptor,
            ca_pem: ca_cert.pem(),
            ca_der: ca_cert.der().to_vec(),
        })
    }
}

/// A TLS acceptor (ring provider, HTTP/1.1 over ALPN) for a certificate chain and its key.
fn acceptor(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<TlsAcceptor> {
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(tls_error)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Makes ring the process-wide rustls provider unless one is installed already, so that
/// `kube::Client`s built here (which ask rustls for the default provider) work whichever rustls
/// crypto features the dependency graph enables.
pub(crate) fn install_default_provider() {
    let _ = ring::default_provider().install_default();
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (for kubeconfig `*-data` fields).
pub(crate) fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_should_match_rfc_4648_test_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, want) in cases {
            assert_eq!(base64(input.as_bytes()), want, "{input:?}");
        }
    }

    #[test]
    fn generated_ca_should_be_pem_and_the_acceptor_ready() {
        let tls = Tls::generate(IpAddr::from([127, 0, 0, 1])).unwrap();
        assert!(tls.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(!tls.ca_der.is_empty());
    }
}
