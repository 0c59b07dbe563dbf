"""The handshake's pieces: version negotiation, the handshake line and the
AutoMTLS certificate."""

import base64
import unittest

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

import json

from hookhost_plugin.server import handshake_line, negotiate, reattach_line, server_certificate


class NegotiateTest(unittest.TestCase):
    def test_versions(self):
        self.assertEqual(negotiate("1,2"), 2)
        self.assertEqual(negotiate("2"), 2)
        self.assertEqual(negotiate("1"), 1)
        self.assertEqual(negotiate(" 1 , 2 , 3"), 2)
        self.assertEqual(negotiate(""), 1)
        with self.assertRaises(ValueError) as cm:
            negotiate("3,4")
        self.assertIn("this plugin speaks 1, 2", str(cm.exception))


class HandshakeTest(unittest.TestCase):
    def test_line_is_unpadded_for_every_length(self):
        # go-plugin decodes with RawStdEncoding: padding fails whenever the
        # DER's length is not a multiple of 3, so try all three remainders.
        for der in (b"\x01" * 300, b"\x01" * 301, b"\x01" * 302):
            line = handshake_line(2, "/tmp/x/plugin.sock", der)
            self.assertTrue(line.endswith("\n"))
            fields = line.rstrip("\n").split("|")
            self.assertEqual(fields[:5], ["1", "2", "unix", "/tmp/x/plugin.sock", "grpc"])
            self.assertNotIn("=", fields[5])
            pad = "=" * (-len(fields[5]) % 4)
            self.assertEqual(base64.b64decode(fields[5] + pad), der)

    def test_certificate(self):
        _, pem, der = server_certificate("t")
        cert = x509.load_der_x509_certificate(der)
        self.assertEqual(x509.load_pem_x509_certificate(pem), cert)
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        self.assertEqual(san.get_values_for_type(x509.DNSName), ["localhost"])
        self.assertTrue(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        self.assertIn(ExtendedKeyUsageOID.SERVER_AUTH, list(eku))


class ReattachTest(unittest.TestCase):
    def test_line_is_shell_quoted_json(self):
        line = reattach_line("it's", 2, "/tmp/a b/plugin.sock")
        self.assertTrue(line.startswith("HOOKHOST_REATTACH_PLUGINS='") and line.endswith("'\n"))
        # Undo the shell quoting of the one quote in the name.
        value = line[len("HOOKHOST_REATTACH_PLUGINS='") : -2].replace("'\\''", "'")
        cfg = json.loads(value)["it's"]
        self.assertEqual(
            {k: cfg[k] for k in ("Protocol", "ProtocolVersion", "Test", "Addr")},
            {
                "Protocol": "grpc",
                "ProtocolVersion": 2,
                "Test": True,
                "Addr": {"Network": "unix", "String": "/tmp/a b/plugin.sock"},
            },
        )


if __name__ == "__main__":
    unittest.main()
