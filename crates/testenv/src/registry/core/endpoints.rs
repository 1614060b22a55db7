//! Endpoints: core/v1's `SetDefaults_EndpointPort`, a port is TCP unless it says otherwise, and
//! `ValidateEndpoints` on create and update: each subset has addresses, each address a valid IP
//! that is not unspecified, loopback or link-local (and a DNS label hostname, a subdomain node
//! name), each port a number, a protocol and, when there are several, a DNS label name.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Map, Value, json};

use crate::defaults::json::{items, or_insert_str};
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::field::FieldError;
use crate::validation::names;

/// Go's `ParseIPSloppy`: IPv4 parts may have leading zeros.
fn parse_ip(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

/// `validateEndpointAddress` of the address at `at`.
fn address(addr: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let ip = addr.get("ip").and_then(Value::as_str).unwrap_or_default();
    let field = format!("{at}.ip");
    let parsed = parse_ip(ip);
    if parsed.is_none() {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        ));
    }
    if let Some(hostname) = addr.get("hostname").and_then(Value::as_str)
        && !hostname.is_empty()
    {
        for msg in names::dns1123_label(hostname) {
            errs.push(FieldError::invalid(
                format!("{at}.hostname"),
                &json!(hostname),
                &msg,
            ));
        }
    }
    if let Some(node) = addr.get("nodeName").and_then(Value::as_str) {
        for msg in names::dns1123_subdomain(node) {
            errs.push(FieldError::invalid(
                format!("{at}.nodeName"),
                &json!(node),
                &msg,
            ));
        }
    }
    // `ValidateNonSpecialIP`.
    let Some(parsed) = parsed else {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            "must be a valid IP address",
        ));
        return;
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match parsed {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            (
                v4.is_unspecified(),
                v4.is_loopback(),
                o[0] == 169 && o[1] == 254,
                o[0] == 224 && o[1] == 0 && o[2] == 0,
            )
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                s[0] & 0xffc0 == 0xfe80,
                s[0] & 0xff0f == 0xff02,
            )
        }
    };
    if unspecified {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            &format!("may not be unspecified ({ip})"),
        ));
    }
    if loopback {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(FieldError::invalid(
            &field,
            &json!(ip),
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

/// `validateEndpointPort` of the port at `at`.
fn port(p: &Value, require_name: bool, at: &str, errs: &mut Vec<FieldError>) {
    let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
    if require_name && name.is_empty() {
        errs.push(FieldError::required(format!("{at}.name"), ""));
    } else if !name.is_empty() {
        for msg in names::dns1123_label(name) {
            errs.push(FieldError::invalid(
                format!("{at}.name"),
                &json!(name),
                &msg,
            ));
        }
    }
    let number = p.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&number) {
        errs.push(FieldError::invalid(
            format!("{at}.port"),
            &json!(number),
            "must be between 1 and 65535, inclusive",
        ));
    }
    match p
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "" => errs.push(FieldError::required(format!("{at}.protocol"), "")),
        "SCTP" | "TCP" | "UDP" => {}
        other => errs.push(FieldError::not_supported(
            format!("{at}.protocol"),
            &json!(other),
            &["SCTP", "TCP", "UDP"],
        )),
    }
    if let Some(app) = p.get("appProtocol").and_then(Value::as_str) {
        for msg in names::qualified_name(app) {
            errs.push(FieldError::invalid(
                format!("{at}.appProtocol"),
                &json!(app),
                &msg,
            ));
        }
    }
}

/// `validateEndpointSubsets`.
fn subsets(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let list = obj.get("subsets").and_then(Value::as_array);
    for (i, subset) in list.into_iter().flatten().enumerate() {
        let at = format!("subsets[{i}]");
        let entries = |key: &str| {
            subset
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (ready, not_ready, ports) = (
            entries("addresses"),
            entries("notReadyAddresses"),
            entries("ports"),
        );
        if ready.is_empty() && not_ready.is_empty() {
            errs.push(FieldError::required(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (key, list) in [("addresses", &ready), ("notReadyAddresses", &not_ready)] {
            for (j, a) in list.iter().enumerate() {
                address(a, &format!("{at}.{key}[{j}]"), &mut errs);
            }
        }
        for (j, p) in ports.iter().enumerate() {
            port(p, ports.len() > 1, &format!("{at}.ports[{j}]"), &mut errs);
        }
    }
    errs
}

/// The Endpoints strategy.
pub(crate) struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        for subset in items(obj, "subsets") {
            for port in items(subset, "ports") {
                or_insert_str(port, "protocol", "TCP");
            }
        }
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        subsets(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsets_should_have_routable_addresses_and_named_ports() {
        let mut ep = json!({"subsets": [
            {"ports": [{"port": 80}]},
            {"addresses": [{"ip": "127.0.0.1"}, {"ip": "10.0.0.300"}, {"ip": "fe80::1", "hostname": "Host"}],
             "ports": [{"name": "http", "port": 0}, {"port": 443, "protocol": "HTTP"}]}]});
        EndpointsStrategy.defaults(ep.as_object_mut().unwrap());
        let got: Vec<(String, String)> = subsets(ep.as_object().unwrap())
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect();
        let mut want = vec![
            ("subsets[0]".to_owned(), "Required value: must specify `addresses` or `notReadyAddresses`".to_owned()),
            ("subsets[1].addresses[0].ip".to_owned(), "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)".to_owned()),
            ("subsets[1].addresses[1].ip".to_owned(), "Invalid value: \"10.0.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".to_owned()),
            ("subsets[1].addresses[1].ip".to_owned(), "Invalid value: \"10.0.0.300\": must be a valid IP address".to_owned()),
        ];
        for msg in names::dns1123_label("Host") {
            want.push((
                "subsets[1].addresses[2].hostname".to_owned(),
                format!("Invalid value: \"Host\": {msg}"),
            ));
        }
        want.extend([
            ("subsets[1].addresses[2].ip".to_owned(), "Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)".to_owned()),
            ("subsets[1].ports[0].port".to_owned(), "Invalid value: 0: must be between 1 and 65535, inclusive".to_owned()),
            ("subsets[1].ports[1].name".to_owned(), "Required value".to_owned()),
            ("subsets[1].ports[1].protocol".to_owned(), "Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"".to_owned()),
        ]);
        assert_eq!(got, want);
    }
}
