"""Tests for nous_assets.capture.redact: the privacy guarantee that secrets never reach the store.

Every fake secret is assembled at run time from a fixed seed (prefix + random body) so that this file holds
nothing a secret scanner would flag, and nothing that is a real credential.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import string
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nous_assets.capture.redact as redact_module
from nous_assets.capture.redact import RedactionResult, marker, redact, redact_json, redact_text

_RNG = random.Random(1337)
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
# Bodies must not look like placeholders themselves (xxx, "your", long runs...).
_STUB_WORDS = ("xxx", "your", "example", "dummy", "sample", "fake", "todo", "here", "replace", "redacted", "changeme",
               "secret", "token", "password", "credential")  # fmt: skip


def _rand(n: int, alphabet: str = ALNUM) -> str:
    """A random body that has every character class its alphabet offers and no placeholder-ish piece."""
    classes = [c for c in (LOWER, UPPER, DIGITS) if set(c) & set(alphabet)]
    while True:
        body = "".join(_RNG.choice(alphabet) for _ in range(n))
        if n >= 8 and not all(set(body) & set(c) for c in classes):
            continue
        low = body.lower()
        if any(word in low for word in _STUB_WORDS) or any(ch * 4 in body for ch in set(body)):
            continue
        return body


def _b64(n: int) -> str:
    return _rand(n, ALNUM + "+/")


def _jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = part({"alg": "HS256", "typ": "JWT"})
    payload = part({"sub": _rand(12), "iat": 1700000000, "scope": "repo"})
    return f"{header}.{payload}.{_rand(43, ALNUM + '-_')}"


def _pem(label: str, lines: int = 6, escaped: bool = False) -> str:
    nl = "\\n" if escaped else "\n"
    body = nl.join(_b64(64) for _ in range(lines))
    return f"-----BEGIN {label}-----{nl}{body}{nl}-----END {label}-----"


PW = "Tr0ub4dor-" + _rand(8)  # a password-shaped secret

# (kind, text containing the secret, the secret itself)
SECRETS: list[tuple[str, str, str]] = []


def _case(kind: str, template: str, secret: str) -> None:
    SECRETS.append((kind, template.format(s=secret), secret))


_case("anthropic_api_key", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + _rand(93, ALNUM + "-_") + "AA")
_case("openai_api_key", 'client = OpenAI(api_key="{s}")', "sk-proj-" + _rand(64, ALNUM + "-_"))
_case("openai_api_key", "my key is {s} ok", "sk-" + _rand(48))
_case("aws_access_key", "aws_access_key_id = {s}", "AKIA" + _rand(16, UPPER + DIGITS))
_case("aws_access_key", '"AccessKeyId": "{s}",', "ASIA" + _rand(16, UPPER + DIGITS))
_case("aws_secret_key", "aws_secret_access_key = {s}", _b64(40))
_case("aws_secret_key", '"SecretAccessKey": "{s}"', _b64(40))
_case("github_token", "git remote set-url origin https://{s}@github.com/o/r.git", "ghp_" + _rand(36))
_case("github_token", "GH_TOKEN={s}", "gho_" + _rand(36))
_case("github_token", "token: {s}", "github_pat_" + _rand(22) + "_" + _rand(59))
_case("gitlab_token", "PRIVATE-TOKEN: {s}", "glpat-" + _rand(20, ALNUM + "-_"))
_case("slack_token", "SLACK_BOT_TOKEN={s}", "xoxb-" + _rand(12, DIGITS) + "-" + _rand(13, DIGITS) + "-" + _rand(24))
_case(
    "slack_token",
    "app token {s}",
    "xapp-1-" + _rand(11, UPPER + DIGITS) + "-" + _rand(13, DIGITS) + "-" + _rand(64, HEX),
)
_case(
    "slack_webhook",
    "curl -X POST https://hooks.slack.com/services/{s} -d @msg.json",
    "T" + _rand(8, UPPER + DIGITS) + "/B" + _rand(10, UPPER + DIGITS) + "/" + _rand(24),
)
_case("discord_webhook", "https://discord.com/api/webhooks/123456789012345678/{s}", _rand(68, ALNUM + "-_"))
_case("stripe_key", "stripe.api_key = '{s}'", "sk_live_" + _rand(24))
_case("stripe_key", "STRIPE_RESTRICTED={s}", "rk_live_" + _rand(24))
_case("stripe_key", "publishable: {s}", "pk_live_" + _rand(24))
_case("stripe_key", "test key {s}", "sk_test_" + _rand(24))
_case("stripe_key", "STRIPE_WEBHOOK_SECRET={s}", "whsec_" + _rand(32))
_case("google_api_key", "https://maps.googleapis.com/maps/api/js?key={s}", "AIza" + _rand(35, ALNUM + "-_"))
_case("google_oauth_token", '"client_secret": "{s}"', "GOCSPX-" + _rand(28, ALNUM + "-_"))
_case("gcp_private_key_id", '"type": "service_account", "private_key_id": "{s}",', _rand(40, HEX))
_case(
    "azure_storage_key",
    "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
    _b64(86) + "==",
)
_case("azure_sas_token", "https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig={s}", _b64(43) + "%3D")
_case("npm_token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _rand(36))
_case("pypi_token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + _rand(70, ALNUM + "-_"))
_case("twilio_api_key", "TWILIO_API_KEY_SID={s}", "SK" + _rand(32, HEX))
_case("twilio_auth_token", 'Client("AC' + _rand(32, HEX) + '", "{s}")', _rand(32, HEX))
_case("sendgrid_api_key", "SENDGRID_API_KEY={s}", "SG." + _rand(22, ALNUM + "-_") + "." + _rand(43, ALNUM + "-_"))
_case("heroku_api_key", "HEROKU_API_KEY={s}", str(uuid.UUID(int=_RNG.getrandbits(128), version=4)))
_case("heroku_api_key", "heroku auth: {s}", "HRKU-" + _rand(60, ALNUM + "-_"))
_case("digitalocean_token", "doctl auth init -t {s}", "dop_v1_" + _rand(64, HEX))
_case("datadog_api_key", "DD_API_KEY={s}", _rand(32, HEX))
_case("datadog_api_key", "export DATADOG_APP_KEY='{s}'", _rand(40, HEX))
_case("huggingface_token", "huggingface-cli login --token {s}", "hf_" + _rand(34, LOWER + UPPER))
_case("jwt", "Cookie: session={s}; Path=/", _jwt())
_case("private_key", "id_rsa:\n{s}\n", _pem("RSA PRIVATE KEY"))
_case("private_key", "{s}", _pem("OPENSSH PRIVATE KEY"))
_case("private_key", "cat key.pem\n{s}", _pem("EC PRIVATE KEY", 3))
_case("private_key", '"private_key": "{s}\\n"', _pem("PRIVATE KEY", escaped=True))
_case("url_password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", PW)
_case("url_password", "mysql://root:{s}@127.0.0.1:3306/shop", _rand(14))
_case("url_password", 'MONGO_URI="mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/db"', _rand(16))
_case("url_password", "REDIS_URL=rediss://:{s}@cache.internal:6380/0", _rand(20))
_case("url_password", "amqp://guest2:{s}@rabbit:5672/", _rand(12))
_case("bearer_token", "curl -H 'Authorization: Bearer {s}' https://api.acme.dev", _rand(40, ALNUM + "._-"))
_case("bearer_token", "Authorization: token {s}", _rand(40, HEX))
_case(
    "basic_auth", '{{"headers": {{"Authorization": "Basic {s}"}}}}', base64.b64encode(b"admin:" + PW.encode()).decode()
)
_case("password", "DB_PASSWORD={s}", PW)
_case("password", "  password: {s}\n  host: db", PW)
_case("password", '{{"user": "bob", "password": "{s}"}}', _rand(12))
_case("password", "mysql -u root -p{s} shop < dump.sql", _rand(12))
_case("password", "curl -u admin:{s} https://ci.acme.dev/api", _rand(12))
_case("password", "mycli --password {s} shop", _rand(12))
_case("password", "$env:ADMIN_PASSWORD = '{s}'", _rand(16))
_case("secret", 'client_secret: "{s}"', _rand(32, ALNUM + "-_"))
_case("secret", "JWT_SECRET={s}", _b64(44))
_case("token", 'export SECRET_TOKEN="{s}"', _rand(32))
_case("token", "const authToken = '{s}';", _rand(40, HEX))
_case("api_key", '{{"name": "acme", "api_key": "{s}"}}', _rand(32))
_case("api_key", "X-Api-Key: {s}", _rand(32, HEX))
_case("secret_key", "SECRET_KEY = '{s}'", _rand(50, ALNUM + "!@#^&*-_=+"))
_case("secret_key", "SIGNING_KEY={s}", _rand(32, LOWER + UPPER))  # letters-only base64: admitted by its shape
_case("credential", "credentials={s}", base64.b64encode(_rand(30).encode()).decode())
_case("access_key", "MINIO_ACCESS_KEY={s}", _rand(20, UPPER + DIGITS))

# Token-level detection: keys pasted in prose, unlisted names, known prefixes, random tokens.
_case("secret", "HEROKU_KEY={s}", str(uuid.UUID(int=_RNG.getrandbits(128), version=4)))
_case("secret", "the sentry token is {s} for staging", _rand(64, HEX))
_case("stripe_key", "use {s} for the webhook tests", "rk_" + "test_" + _rand(24))
_case("high_entropy_secret", "here it is: {s} — keep it safe", _rand(32, LOWER + DIGITS))
_case("high_entropy_secret", "ADAFRUIT={s}", _rand(40, ALNUM))
_case("pulumi_token", "pulumi login with {s}", "pul-" + _rand(40, HEX))
_case("azure_ad_client_secret", "<value>{s}</value>", _rand(3) + "8Q~" + _rand(34, ALNUM + "_~.-"))
_case(
    "onepassword_secret_key",
    "the emergency kit says {s}",
    "A3-" + "-".join(_rand(n, UPPER + DIGITS) for n in (6, 6, 5, 5, 5, 5)),
)
_case("password", "curl -u {s}: https://api.acme.dev/v1/charges", _rand(24))
_case("softlayer_api_key", "curl https://api.softlayer.com/soap/v3/{s}/SoftLayer_Account.json", _rand(64, HEX))

# Assignment forms of gitleaks' own test cases (issue 20: a corpus of them leaked 2.5 %).
_case("token", 'var etsyToken string = "{s}"', _rand(24, LOWER + DIGITS))
_case("token", 'val dropboxToken: String = "{s}"', _rand(15, LOWER + DIGITS))
_case("token", 'ETSY_TOKEN ::= "{s}"', _rand(24, LOWER + DIGITS))
_case("token", 'API_TOKEN ?= "{s}"', _rand(24, LOWER + DIGITS))
_case("token", '$etsyToken .= "{s}";', _rand(24, LOWER + DIGITS))
_case("token", 'System.setProperty("ETSY_TOKEN", "{s}");', _rand(24, LOWER + DIGITS))
_case("token", "<settings>\n  <apiToken>\n    {s}\n  </apiToken>\n</settings>", _rand(24, LOWER + DIGITS))
_case("password", "<password>{s}</password>", PW)
_case("token", "etsy_token: {s}", _rand(24, LOWER + DIGITS))  # YAML, not a type annotation
_case("token", "SUMOLOGIC_TOKEN={s}", _rand(14, LOWER + UPPER))  # short letters-only keys
_case("secret", "HASHICORP_SECRET={s}", _rand(5) + "=" + _rand(8))  # "=" among random characters
_case("sidekiq_secret", "export BUNDLE_ENTERPRISE__CONTRIBSYS__COM={s}", _rand(8, HEX) + ":" + _rand(8, HEX))
_case("plaid_token", "PLAID_ACCESS={s}", "access-sandbox-" + str(uuid.UUID(int=_RNG.getrandbits(128), version=4)))
_case("lob_api_key", "lob key {s}", "test_pub_" + _rand(31, HEX))
_case("freemius_secret_key", "the freemius key {s}", "sk_" + _rand(29))
_case("age_secret_key", "age key: {s}", "AGE-SECRET-KEY-1" + "Q" * 58)  # gitleaks' own all-zero key
_case("jwt", "JWT_BASE64={s}", "ZXlK" + _b64(60))
_case("airtable_token", "airtable: {s}", "pat" + _rand(14) + "." + _rand(64, HEX))
_case("terraform_token", "terraform login with {s}", _rand(14, LOWER + DIGITS) + ".atlasv1." + _rand(67))
_case("maxmind_license_key", "GEOIP={s}", _rand(6) + "_" + _rand(29) + "_mmk")
# Tokens inside branch and folder names (metadata).
_case("github_token", "git checkout -b fix/{s}", "ghp_" + _rand(36))
_case("doppler_token", "cd /home/dev/work/{s}/app && ls", "dp.pt." + _rand(43))
_case("planetscale_token", "On branch feature/{s}\nnothing to commit", "pscale_tkn_" + _rand(43))
_case("maxmind_license_key", "/home/dev/{s}/app", _rand(6) + "_" + _rand(29) + "_mmk")
_case("aws_access_key", "mkdir -p /tmp/backup-{s}", "AKIA" + _rand(16, UPPER + DIGITS))

KINDS = sorted({kind for kind, _, _ in SECRETS})


def test_there_are_many_kinds() -> None:
    assert len(KINDS) >= 20


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_secret_is_redacted_and_counted(kind: str, text: str, secret: str) -> None:
    result = redact_text(text)
    assert secret not in result.text
    assert result.counts.get(kind, 0) >= 1, result
    assert marker(kind) in result.text
    assert redact(text) == result.text
    assert redact(result.text) == result.text  # idempotent


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_secret_is_redacted_inside_a_raw_jsonl_line(kind: str, text: str, secret: str) -> None:
    """A raw transcript line holds the secret JSON-escaped; redacting it must keep the line valid JSON."""
    line = json.dumps({"type": "user", "message": {"content": [{"type": "tool_result", "content": text}]}})
    out = redact(line)
    assert secret not in out
    assert json.loads(out)["type"] == "user"


def test_all_secrets_in_one_text() -> None:
    text = "\n".join(t for _, t, _ in SECRETS)
    result = redact_text(text)
    for _, _, secret in SECRETS:
        assert secret not in result.text
    assert set(KINDS) <= set(result.counts)
    assert redact(result.text) == result.text


# ---------------------------------------------------------------------------------------------------------
# Structure is kept: only the secret goes.


def test_assignment_keeps_the_name() -> None:
    assert redact("password=" + "hunter2xyz") == "password=[REDACTED:password]"
    assert redact('export API_KEY="a1b2c3d4e5f6g7h8"') == 'export API_KEY="[REDACTED:api_key]"'
    assert redact("db:\n  password: s3cr3t-Pa55\n") == "db:\n  password: [REDACTED:password]\n"
    assert redact('{"password": "hunter2xyz"}') == '{"password": "[REDACTED:password]"}'


def test_url_keeps_user_host_and_path() -> None:
    out = redact("postgres://user:" + "s3cretpw" + "@db.example.com:5432/app")
    assert out == "postgres://user:[REDACTED:url_password]@db.example.com:5432/app"


@pytest.mark.parametrize(
    "scheme", ["postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "rediss", "amqp", "https", "ftp"]
)
def test_connection_string_schemes(scheme: str) -> None:
    password = _rand(14)
    result = redact_text(f"url = {scheme}://svc_user:{password}@host-1.internal:1234/db?ssl=true")
    assert result.text == f"url = {scheme}://svc_user:[REDACTED:url_password]@host-1.internal:1234/db?ssl=true"
    assert result.counts == {"url_password": 1}


def test_url_password_containing_an_at_sign() -> None:
    out = redact("redis://u:p@ss" + "w0rd@cache:6379")
    assert out == "redis://u:[REDACTED:url_password]@cache:6379"


def test_bearer_header_keeps_the_scheme() -> None:
    token = _rand(32, ALNUM + "._-")
    assert redact(f"Authorization: Bearer {token}") == "Authorization: Bearer [REDACTED:bearer_token]"


def test_provider_key_in_assignment_gets_the_provider_kind() -> None:
    key = "sk-proj-" + _rand(48)
    result = redact_text(f"export OPENAI_API_KEY={key}")
    assert result.text == "export OPENAI_API_KEY=[REDACTED:openai_api_key]"
    assert result.counts == {"openai_api_key": 1}


def test_webhook_and_connection_string_keep_their_frame() -> None:
    hook = "T" + _rand(8, UPPER + DIGITS) + "/B" + _rand(10, UPPER + DIGITS) + "/" + _rand(24)
    assert redact(f"https://hooks.slack.com/services/{hook}") == (
        "https://hooks.slack.com/services/[REDACTED:slack_webhook]"
    )
    conn = f"AccountName=acme;AccountKey={_b64(86)}==;EndpointSuffix=core.windows.net"
    assert redact(conn) == "AccountName=acme;AccountKey=[REDACTED:azure_storage_key];EndpointSuffix=core.windows.net"


def test_counts_several_of_a_kind() -> None:
    text = " ".join("ghp_" + _rand(36) for _ in range(3))
    assert redact_text(text).counts == {"github_token": 3}
    assert redact_text(text).total == 3


# ---------------------------------------------------------------------------------------------------------
# False positives: code, prose, ids and placeholders are left alone.

UNCHANGED = [
    # placeholders
    "ANTHROPIC_API_KEY=your-key-here",
    "export OPENAI_API_KEY=your-key-here",
    "API_KEY=<API_KEY>",
    "api_key: <your api key>",
    "token: xxx",
    "TOKEN=xxxxxxxxxxxxxxxx",
    "PASSWORD=changeme",
    "password: ${DB_PASSWORD}",
    "password: ${{ secrets.DB_PASSWORD }}",
    "export GITHUB_TOKEN=$GH_TOKEN",
    "TOKEN=$(gh auth token)",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "const token = process.env.API_TOKEN;",
    "SECRET_KEY=example-secret-key-123",
    "password=dummy-password-1",
    "Authorization: Bearer ***",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "AKIA" + "IOSFODNN7EXAMPLE",  # the AWS documentation's example key id
    "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG" + "/bPxRfiCYEXAMPLEKEY",
    "ghp_" + "x" * 36,
    "sk-ant-api03-..." + "." * 20,
    "password: ********",
    "postgres://user:password@localhost:5432/db",
    "postgres://postgres:postgres@localhost:5432/app",
    "mysql://root:${MYSQL_ROOT_PASSWORD}@db/app",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA...\n-----END RSA PRIVATE KEY-----",
    # code
    "password = get_password()",
    "token = self.token",
    "api_key: str",
    "api_key: Optional[str] = None",
    "def login(username: str, password: str) -> Token:",
    "if password == confirm_password:",
    "password: hashedPassword,",
    "password: req.body.password,",
    "secret = secrets.token_hex(32)",
    "connect(host=host, password=password)",
    "max_tokens=4096",
    "token_count = 123456789",
    "input_tokens: 12345678",
    'autoComplete="current-password"',
    'name="password" type="password"',
    "password: z.string().min(8)",
    "TOKEN_URL=https://oauth2.googleapis.com/token",
    "token_type: bearer",
    "docker run -u 1000:1000 image",
    "git push -u origin main",
    "secret_key_base: dev-only-secret-not-for-production-use",
    "ssh -i ~/.ssh/id_ed25519 host",
    "if token != self._termination_char:",
    "if inspector_params.token0 == metadata_params.token0:",
    "elif token == Comment.Special:",
    '_SEND_MESSAGE_TOKEN = "send_message"',
    'image_break_token="[IMG_BREAK]", pad_token="__null__"',
    "entity_mask2_token=entity_mask2_token,",
    "user = User(username='scolvin', password='password1')",
    'HEADER_AUTH_KEY = "xet-auth"',
    'if bearer_token == "databricks-sdk":',
    "# Cache for the OIDC-exchanged token: re-exchanging on every call would be wasteful",
    "# First pass: decided_mask==0, every element participates.",
    "in their original positions--pass `strict=False` to keep them",
    '"adls.account-key": "azure_storage_account_key",',
    "t.Token=t.QueryDocumentKeys=t.OperationTypeNode=void 0",
    'publicKeyToken="1fc8b3b9a1e18e3b"',
    '"AWS::IAM::AccessKey": "07e165b51798ce89e0a1",',
    '"Resource": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"',
    '"git://[path-to-repo[:]][ref@]path/to/file"',
    'urlopen("HTTPS://jo%40email.com:a%20secret@host.dev/")',
    'create_engine("postgresql+psycopg2://scott:tiger@localhost/test")',
    '"Buffer the body before sending or use bearer authentication."',
    "did not include a valid Bearer access_token",
    "For more information, see `Basic Operations for Tables`",
    'requester_id = "AROA' + "Z3Y4X5W6V7U8T9S0" + '"',  # a role id, not a key id
    # ids and paths
    "session 4d5611e5-241a-462a-8d15-5122611a9569 resumed",
    'the secret key rotation landed","uuid":"4d5611e5-241a-462a-8d15-5122611a9569","timestamp":"2026-02-12"',
    "To https://github.com/acme/repo.git\n   6c08b3d..1a2b3c4  main -> main",
    "diff --git a/key.ts b/key.ts\nindex 0000000..d9e8f7a 100644",
    "/usr/bin/git log -1 --format=%H\nebc91a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f\nRun npm run check",
    "const privateKey = secp256k1.utils.randomPrivateKey();",
    "| rootIpnsPublicKey removed from vault entity | SECP256K1_PRIVATE_KEY_SIZE |",
    "warnOnInvalidKey @ chunk-36jrqfj4.js:2322",
    "For Anthropic: claude-3-5-sonnet-20241022, for OpenAI: gpt-4o-2024-08-06",
    '"parentToolUseID":"toolu_01Cz2Pnv7qNcnK1ZxYwVuT9s","agentId":"agent_msg_01QVA9ZtQhiqWU7kKBrXThFY"',
    "commit 8cc42b0bd39d04e71e509d7d58e6782ab435329f",
    "md5 d41d8cd98f00b204e9800998ecf8427e",
    "/home/user/.config/secrets/token.json",
    "PWD=/home/user/project",
    "OLDPWD=/tmp",
    "pip install scikit-learn; npm run task-management-dashboard-component",
    "https://github.com/acme/repo/blob/main/src/auth/token.py",
    "ssh://git@github.com:22/acme/repo.git",
    "http://localhost:8080/api?key=value",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    # prose
    "Please enter your password and the token you received by email.",
    "The API key must be rotated every 90 days; store the secret in Vault.",
    "Password: must be at least 12 characters long",
    "Token: authentication happens in middleware",
    "Basic usage: run the tool with --help",
    "Bearer tokens expire after an hour.",
]


UNCHANGED += [
    '<meta name="csrf-token" content="' + _rand(56, ALNUM + "_-") + '"/>',
    '"integrity": "sha512-' + _b64(86) + '=="',
    "golang.org/x/net v0.0.0-20210226172049-e18ecbb05110 h1:" + _b64(43) + "=",
    "ETag: W/\"2b-" + _rand(27, ALNUM) + "\"",
    "https://cdn.example.com/img/hero.svg?w=280&fit=max&n=" + _rand(16, ALNUM) + "&s=" + _rand(32, HEX),
    "-----BEGIN CERTIFICATE-----\n" + _b64(64) + "\n" + _b64(64) + "\n-----END CERTIFICATE-----",
    # assignment forms that are code, not secrets
    "token: MessageEventHandler",
    "if token > 5 and secret < 10:",
    'jwt.decode(token, "HS256")',
    'config.get("password", "")',
    'os.environ.setdefault("API_TOKEN", "${API_TOKEN}")',
    "TOKEN=FOO=bar",
    "var tokenString string = getToken()",
    "val password: String = readLine()",
    "<password>changeme</password>",
    "<token>\n  ${TOKEN}\n</token>",
    # names, branches and paths that only look prefixed
    "git checkout -b feature/api-key-rotation",
    "cd /home/dev/projects/secret_manager_access/app",
    "Downloaded to ~/.cache/qmd/models/hf_ggml-org_embeddinggemma-300M-Q8_0.gguf",
    "foo-API-DOCUMENTATION-GENERATOR-V2-CONFIG",
    "https://github.com/acme/repo/commit/4b1d" + _rand(36, HEX),
    "def test_user_can_login_with_valid_credentials_and_remember_me():",
    "from sk_learn_model_parameters_dictionary_value import x",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_not_a_secret(text: str) -> None:
    result = redact_text(text)
    assert result.text == text, result
    assert result.counts == {}


def test_claude_code_usage_record_is_untouched() -> None:
    record = {
        "type": "assistant",
        "uuid": "258c7280-ae70-4798-800f-63464d01a85d",
        "message": {"usage": {"input_tokens": 1234, "output_tokens": 567, "cache_read_input_tokens": 89012}},
    }
    line = json.dumps(record)
    assert redact(line) == line
    assert redact_json(record) == (record, {})


# ---------------------------------------------------------------------------------------------------------
# <private> blocks


def test_private_block_is_removed_whole() -> None:
    text = "keep this <private>my home address\nand phone 555-0100</private> and this"
    result = redact_text(text)
    assert result.text == "keep this [REDACTED:private] and this"
    assert result.counts == {"private": 1}


def test_private_blocks_several_and_case_insensitive() -> None:
    text = "a <private>one</private> b <PRIVATE>two</PRIVATE> c"
    assert redact(text) == "a [REDACTED:private] b [REDACTED:private] c"


def test_secret_inside_private_counts_as_private() -> None:
    text = "<private>DB_PASSWORD=" + PW + "</private>"
    assert redact_text(text).counts == {"private": 1}


def test_unclosed_private_tag_hides_the_rest() -> None:
    assert redact("public part <private>the rest is private") == "public part [REDACTED:private]"


def test_private_tag_in_backticks_is_a_mention() -> None:
    text = "Wrap anything sensitive in `<private>` and `</private>`; Nous drops it before storing."
    assert redact(text) == text


# ---------------------------------------------------------------------------------------------------------
# PEM keys


def test_pem_multiline_keeps_surrounding_text() -> None:
    key = _pem("OPENSSH PRIVATE KEY", 8)
    text = f"Here is the key:\n{key}\nNow run ssh-add."
    result = redact_text(text)
    assert result.text == "Here is the key:\n[REDACTED:private_key]\nNow run ssh-add."
    assert result.counts == {"private_key": 1}


def test_pem_encrypted_with_headers_and_truncated() -> None:
    nl = "\n"
    lines = nl.join(_b64(64) for _ in range(4))
    encrypted = (
        f"-----BEGIN RSA PRIVATE KEY-----{nl}Proc-Type: 4,ENCRYPTED{nl}DEK-Info: AES-128-CBC,"
        f"{_rand(32, HEX).upper()}{nl}{nl}{lines}{nl}-----END RSA PRIVATE KEY-----"
    )
    assert redact(encrypted) == "[REDACTED:private_key]"
    truncated = f"$ head -3 key.pem{nl}-----BEGIN PRIVATE KEY-----{nl}{_b64(64)}{nl}{_b64(64)}"
    out = redact(truncated)
    assert out == f"$ head -3 key.pem{nl}[REDACTED:private_key]"


def test_public_key_is_kept() -> None:
    text = f"-----BEGIN PUBLIC KEY-----\n{_b64(64)}\n-----END PUBLIC KEY-----"
    assert redact(text) == text


# ---------------------------------------------------------------------------------------------------------
# redact_json


def test_redact_json_on_a_claude_code_record() -> None:
    key = "sk-proj-" + _rand(56, ALNUM + "-_")
    token = "ghp_" + _rand(36)
    record = {
        "type": "user",
        "uuid": "4d5611e5-241a-462a-8d15-5122611a9569",
        "timestamp": "2026-02-12T10:00:00.000Z",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": f"export OPENAI_API_KEY={key}\n"},
                {"type": "text", "text": f"push with {token} please"},
            ],
        },
        "toolUseResult": {"stdout": "ok", "interrupted": False, "exit": 0, "items": ("a", f"DB_PASSWORD={PW}")},
    }
    original = copy.deepcopy(record)
    out, counts = redact_json(record)
    assert record == original  # not modified in place
    assert counts == {"openai_api_key": 1, "github_token": 1, "password": 1}
    blocks = out["message"]["content"]
    assert blocks[0]["content"] == "export OPENAI_API_KEY=[REDACTED:openai_api_key]\n"
    assert blocks[1]["text"] == "push with [REDACTED:github_token] please"
    assert out["toolUseResult"]["items"] == ("a", "DB_PASSWORD=[REDACTED:password]")
    assert out["uuid"] == record["uuid"] and out["timestamp"] == record["timestamp"]
    assert out["toolUseResult"]["interrupted"] is False and out["toolUseResult"]["exit"] == 0
    dumped = json.dumps(out)
    assert key not in dumped and token not in dumped and PW not in dumped


def test_redact_json_blanks_values_under_secret_keys() -> None:
    obj = {
        "api_key": "abc",  # short, but the key says what it is
        "password": "hunter2",
        "clientSecret": "s",
        "Authorization": "Bearer abc.def",
        "access_key": "AK1",
        "private_key": "k" * 3,
        "token": "t0k",
        "x-api-key": "z9",
        "nested": [{"secret": "v4lue"}],
    }
    out, counts = redact_json(obj)
    assert out == {
        "api_key": marker("api_key"),
        "password": marker("password"),
        "clientSecret": marker("secret"),
        "Authorization": marker("authorization"),
        "access_key": marker("access_key"),
        "private_key": marker("private_key"),
        "token": marker("token"),
        "x-api-key": marker("api_key"),
        "nested": [{"secret": marker("secret")}],
    }
    assert sum(counts.values()) == 9


def test_redact_json_keeps_non_secret_and_placeholder_values() -> None:
    obj = {
        "password": "",
        "api_key": "your-key-here",
        "token": None,
        "secret": 12345,
        "max_tokens": 4096,
        "input_tokens": "1234",
        "passwordHash": "is kept as text",
        "tokenizer": "cl100k_base",
        "pwd": "/home/user",
    }
    assert redact_json(obj) == (obj, {})


def test_redact_json_is_idempotent() -> None:
    obj = {"a": [f"token={_rand(30)}", {"password": PW}], "b": "sk-ant-" + _rand(40)}
    once, counts = redact_json(obj)
    twice, counts2 = redact_json(once)
    assert twice == once
    assert counts2 == {}
    assert counts == {"token": 1, "password": 1, "anthropic_api_key": 1}


# ---------------------------------------------------------------------------------------------------------
# Idempotency and robustness


def test_result_is_frozen() -> None:
    result = redact_text("nothing here")
    assert isinstance(result, RedactionResult)
    with pytest.raises(AttributeError):
        result.text = "x"  # type: ignore[misc]


def test_markers_are_never_rematched() -> None:
    text = "password=[REDACTED:password] url=postgres://u:[REDACTED:url_password]@h/db Bearer [REDACTED:jwt]"
    assert redact_text(text) == RedactionResult(text, {})


def test_text_whose_length_changes_when_lowered() -> None:
    # "İ".lower() is two characters, so offsets of text.lower() differ: the case-insensitive fallback runs.
    token = "ghp_" + _rand(36)
    text = f"İstanbul DB_PASSWORD={PW} and Bearer {_rand(30)} and {token}"
    result = redact_text(text)
    assert PW not in result.text and token not in result.text
    assert result.counts == {"password": 1, "bearer_token": 1, "github_token": 1}
    assert result.text.startswith("İstanbul DB_PASSWORD=[REDACTED:password]")


def test_long_text_takes_the_ungated_path() -> None:
    filler = "lorem ipsum dolor sit amet " * 200
    secret = "xoxp-" + _rand(12, DIGITS) + "-" + _rand(32)
    text = filler + f"SLACK={secret}\n" + filler
    assert len(text) > 4096
    assert redact(text) == filler + "SLACK=[REDACTED:slack_token]\n" + filler


def test_trigger_gate_never_hides_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short texts skip rules whose trigger substrings are absent; that must never change the result."""
    texts = [t for _, t, _ in SECRETS] + UNCHANGED + FILLERS
    gated = [redact_text(t) for t in texts]
    monkeypatch.setattr(redact_module, "_GATE_BELOW", 0)
    monkeypatch.setattr(redact_module, "_CACHE_BELOW", 0)
    assert [redact_text(t) for t in texts] == gated


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_idempotent_on_arbitrary_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


FILLERS = [
    "hello world",
    "see docs/design.md",
    "```bash",
    "{",
    "}",
    '"',
    ":",
    "=",
    "export",
    "password",
    "token:",
    "Authorization:",
    "Bearer",
    "İstanbul",
    "日本語のテキスト",
    "<private>",
    "</private>",
    "-----BEGIN RSA PRIVATE KEY-----",
    "https://",
    "user:pw@",
    "[REDACTED:x]",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FILLERS + [t for _, t, _ in SECRETS]), max_size=10), st.sampled_from(["", " ", "\n"]))
def test_idempotent_on_mixed_fragments(parts: list[str], sep: str) -> None:
    text = sep.join(parts)
    once = redact(text)
    assert redact(once) == once
    gated: dict[str, int] = {}
    ungated: dict[str, int] = {}
    assert redact_module._run_rules(text, gated, gate=True) == redact_module._run_rules(text, ungated, gate=False)
    assert gated == ungated


SAFE_FILLERS = ["hello world", "see docs/design.md", "```bash", "the end.", "İstanbul", "日本語のテキスト", "{", "}"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*SAFE_FILLERS, *range(len(SECRETS))]), min_size=1, max_size=8))
def test_secrets_between_ordinary_lines_are_all_redacted(parts: list[str | int]) -> None:
    lines = [SECRETS[p][1] if isinstance(p, int) else p for p in parts]
    out = redact("\n".join(lines))
    for p in parts:
        if isinstance(p, int):
            assert SECRETS[p][2] not in out


# ---------------------------------------------------------------------------------------------------------
# Real transcripts

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"


@pytest.mark.slow
@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="shared transcript corpus not present")
def test_real_transcripts_do_not_crash_and_keep_placeholders() -> None:
    """The corpus was scanned for secrets before it was copied and holds only placeholders (SOURCES.md),
    so every redaction found in it would be a false positive."""
    files = sorted(TRANSCRIPTS.rglob("*.jsonl"))
    assert files
    placeholder_lines = 0
    total: dict[str, int] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            result = redact_text(line)
            for kind, n in result.counts.items():
                total[kind] = total.get(kind, 0) + n
            if "your-key-here" in line:
                placeholder_lines += 1
                assert "ANTHROPIC_API_KEY=your-key-here" in result.text
            record = json.loads(line)
            out, counts = redact_json(record)
            json.dumps(out)
            for kind, n in counts.items():
                total[kind] = total.get(kind, 0) + n
    assert placeholder_lines > 0
    assert total == {}


def test_idempotent_on_many_glued_repetitions() -> None:
    """Each pass exposed one more of six glued ``mysql -p`` commands; redaction runs to its fixed point."""
    text = "mysql -u root -ps0rA5kGw6jS9 shop < dump.sql" * 12
    once = redact(text)
    assert "s0rA5kGw6jS9" not in once
    assert redact(once) == once
