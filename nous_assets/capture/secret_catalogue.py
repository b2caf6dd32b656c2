"""The rule catalogue of token redaction: provider token prefixes, provider names and context words.

Why a catalogue apart from the engine (:mod:`nous_assets.capture.secret_tokens`): the formats change as
providers add token types, and a reviewer should be able to read and extend the list without reading the
matching code. Every entry is written from the provider's public token format (documentation, changelogs,
announced prefixes), not copied from another scanner's configuration.

* :data:`PREFIXES`: a token that starts with one of these and has at least ``min_body`` token characters
  after it is that provider's credential, whatever its body looks like (hex bodies, letters only...).
* :data:`PROVIDERS`: names of services that issue credentials. A value next to one of these words
  (``HEROKU_KEY=…``, "the sentry token …", "use … for twilio") has secret context.
* :data:`SECRET_WORDS`: words that say a value is a credential (``key``, ``token``, ``password``...).
* :data:`NOT_SECRET_QUALIFIERS`: words that turn a secret word into an ordinary one: a ``cache key``, a
  ``primary key``, ``max tokens``, a ``public key``.
* :data:`ID_PREFIXES`: public, non-secret identifier formats that look random (tool-use ids, Stripe
  object ids...): never redacted for their shape alone.
"""

from __future__ import annotations

__all__ = [
    "ID_PREFIXES",
    "NOT_SECRET_QUALIFIERS",
    "PREFIXES",
    "PROVIDERS",
    "SECRET_WORDS",
    "STRONG_SECRET_WORDS",
    "prefix_kind",
]

# prefix -> (kind, minimum number of token characters after the prefix)
PREFIXES: dict[str, tuple[str, int]] = {
    # source hosting and CI
    "ghp_": ("github_token", 30), "gho_": ("github_token", 30), "ghu_": ("github_token", 30),
    "ghs_": ("github_token", 30), "ghr_": ("github_token", 30), "github_pat_": ("github_token", 22),
    "glpat-": ("gitlab_token", 20), "gldt-": ("gitlab_token", 20), "glrt-": ("gitlab_token", 20),
    "glptt-": ("gitlab_token", 20), "glcbt-": ("gitlab_token", 20), "glffct-": ("gitlab_token", 20),
    "glft-": ("gitlab_token", 20), "glimt-": ("gitlab_token", 20), "glagent-": ("gitlab_token", 40),
    "gloas-": ("gitlab_token", 40), "glsoat-": ("gitlab_token", 20), "GR1348941": ("gitlab_token", 20),
    "_gitlab_session=": ("gitlab_token", 32),
    "sgp_": ("sourcegraph_token", 40), "rdme_": ("readme_api_key", 40), "pul-": ("pulumi_token", 40),
    "squ_": ("sonar_token", 40), "sqp_": ("sonar_token", 40), "sqa_": ("sonar_token", 40),
    "dapi": ("databricks_token", 32), "pnu_": ("prefect_token", 30), "ico-": ("infracost_token", 30),
    "rubygems_": ("rubygems_token", 40), "npm_": ("npm_token", 36), "CLOJARS_": ("clojars_token", 40),
    "pypi-AgE": ("pypi_token", 50),
    # AI providers
    "sk-ant-": ("anthropic_api_key", 20), "sk-proj-": ("openai_api_key", 20),
    "sk-svcacct-": ("openai_api_key", 20), "sk-admin-": ("openai_api_key", 20),
    "hf_": ("huggingface_token", 30), "api_org_": ("huggingface_token", 30), "pplx-": ("perplexity_api_key", 40),
    "r8_": ("replicate_token", 30), "gsk_": ("groq_api_key", 40), "xai-": ("xai_api_key", 40),
    # cloud and infrastructure
    "AKIA": ("aws_access_key", 16), "ASIA": ("aws_access_key", 16), "ABIA": ("aws_access_key", 16),
    "ACCA": ("aws_access_key", 16), "A3T": ("aws_access_key", 16), "ABSK": ("aws_bedrock_api_key", 80),
    "bedrock-api-key-": ("aws_bedrock_api_key", 20),
    "AIza": ("google_api_key", 30), "GOCSPX-": ("google_oauth_token", 20), "ya29.": ("google_oauth_token", 20),
    "LTAI": ("alibaba_access_key", 16), "dop_v1_": ("digitalocean_token", 40),
    "doo_v1_": ("digitalocean_token", 40),
    "dor_v1_": ("digitalocean_token", 40),
    "v1.0-": ("cloudflare_origin_ca_key", 100),
    "hvs.": ("vault_token", 24), "hvb.": ("vault_token", 24), "hvr.": ("vault_token", 24),
    "fo1_": ("flyio_token", 30), "fm1a_": ("flyio_token", 60), "fm1r_": ("flyio_token", 60),
    "fm2_": ("flyio_token", 60), "HRKU-": ("heroku_api_key", 20), "pscale_tkn_": ("planetscale_token", 30),
    "pscale_oauth_": ("planetscale_token", 30), "pscale_pw_": ("planetscale_password", 30),
    "dt0c01.": ("dynatrace_token", 20), "sha256~": ("openshift_token", 40), "tk-us-": ("scalingo_token", 40),
    "4b1d": ("clickhouse_api_key", 36), "AKCp": ("artifactory_api_key", 60), "cmVmd": ("artifactory_token", 50),
    "dp.pt.": ("doppler_token", 40), "dp.st.": ("doppler_token", 40), "dp.ct.": ("doppler_token", 40),
    "dp.sa.": ("doppler_token", 40), "dp.scim.": ("doppler_token", 40), "dp.audit.": ("doppler_token", 40),
    "ops_eyJ": ("onepassword_token", 100), "A3-": ("onepassword_secret_key", 30),
    "AGE-SECRET-KEY-1": ("age_secret_key", 50),
    "eyJrIjoi": ("grafana_api_key", 50), "glc_": ("grafana_token", 30), "glsa_": ("grafana_token", 30),
    "NRAK-": ("newrelic_api_key", 20), "NRII-": ("newrelic_api_key", 20), "NRJS-": ("newrelic_api_key", 16),
    "NRAA-": ("newrelic_api_key", 20),
    # payments, commerce and messaging
    "sk_live_": ("stripe_key", 10), "sk_test_": ("stripe_key", 10), "sk_prod_": ("stripe_key", 10),
    "rk_live_": ("stripe_key", 10), "rk_test_": ("stripe_key", 10), "rk_prod_": ("stripe_key", 10),
    "whsec_": ("stripe_key", 24), "shpat_": ("shopify_token", 32), "shpca_": ("shopify_token", 32),
    "shppa_": ("shopify_token", 32), "shpss_": ("shopify_token", 32), "sq0atp-": ("square_token", 22),
    "sq0csp-": ("square_token", 22), "EAAA": ("square_token", 22), "EAAM": ("facebook_token", 80),
    "EAAC": ("facebook_token", 80), "duffel_test_": ("duffel_token", 40), "duffel_live_": ("duffel_token", 40),
    "shippo_live_": ("shippo_token", 40), "shippo_test_": ("shippo_token", 40),
    "FLWSECK_TEST-": ("flutterwave_key", 12),
    "FLWPUBK_TEST-": ("flutterwave_key", 32), "FLWSECK-": ("flutterwave_key", 12),
    "FLWPUBK-": ("flutterwave_key", 32),
    "EZAK": ("easypost_token", 50), "EZTK": ("easypost_token", 50), "PMAK-": ("postman_api_key", 50),
    "SG.": ("sendgrid_api_key", 40), "xkeysib-": ("sendinblue_api_key", 60), "xsmtpsib-": ("sendinblue_api_key", 60),
    "xoxb-": ("slack_token", 10), "xoxp-": ("slack_token", 10), "xoxa-": ("slack_token", 10),
    "xoxr-": ("slack_token", 10), "xoxo-": ("slack_token", 10), "xoxs-": ("slack_token", 10),
    "xoxe-": ("slack_token", 10), "xoxe.xoxb-": ("slack_token", 10), "xoxe.xoxp-": ("slack_token", 10),
    "xapp-": ("slack_token", 10), "AAAAAAAAAAAAAAAAAAAAA": ("twitter_bearer_token", 20),
    # productivity, monitoring and the rest
    "lin_api_": ("linear_api_key", 40), "ntn_": ("notion_token", 40), "secret_": ("notion_token", 43),
    "ATATT3": ("atlassian_api_token", 100), "sntrys_": ("sentry_token", 60), "sntryu_": ("sentry_token", 60),
    "sm_aat_": ("settlemint_token", 16), "sm_pat_": ("settlemint_token", 16), "sm_sat_": ("settlemint_token", 16),
    "tfp_": ("typeform_token", 50), "fio-u-": ("frameio_token", 60), "p8e-": ("adobe_client_secret", 32),
    "s-s4t2ud-": ("intra42_secret", 60), "s-s4t2af-": ("intra42_secret", 60), "API-": ("octopus_api_key", 26),
    "dnkey-": ("defined_networking_token", 60), "AQVN": ("yandex_api_key", 35), "t1.": ("yandex_token", 60),
    "key-": ("mailgun_api_key", 32), "pubkey-": ("mailgun_api_key", 32), "NRAL-": ("newrelic_api_key", 20),
    "ZXlK": ("jwt", 40),  # a JWT encoded in base64 once more ("eyJ" -> "ZXlK")
    "access-sandbox-": ("plaid_token", 36), "access-development-": ("plaid_token", 36),
    "access-production-": ("plaid_token", 36),
    "test_": ("lob_api_key", 35), "live_": ("lob_api_key", 35), "test_pub_": ("lob_api_key", 31),
    "live_pub_": ("lob_api_key", 31),  # hex bodies only (secret_tokens._HEX_BODY_KINDS)
    "sk_": ("freemius_secret_key", 29),  # a generated body only (secret_tokens._RANDOM_BODY_KINDS)
}  # fmt: skip

_BY_LENGTH = sorted({len(p) for p in PREFIXES}, reverse=True)


def prefix_kind(token: str) -> tuple[str, int] | None:
    """``(kind, prefix length)`` when ``token`` starts with a known credential prefix and is long enough."""
    for n in _BY_LENGTH:
        if len(token) <= n:
            continue
        hit = PREFIXES.get(token[:n])
        if hit is not None and len(token) - n >= hit[1]:
            return hit[0], n
    return None


# Services that issue credentials (lower case; multi-word names without separators).
PROVIDERS: frozenset[str] = frozenset(
    """
    adafruit adobe cisco airtable algolia alibaba aliyun anthropic asana atlassian jira confluence auth0 authress aws
    amazon azure beamer bitbucket bittrex binance coinbase kraken kucoin bitfinex braintree circleci clickhouse
    cloudflare cloudinary codecov cohere confluent contentful databricks datadog discord docker dockerhub doppler
    droneci dropbox duffel dynatrace easypost elastic etsy facebook fastly figma finicity finnhub firebase flickr
    flutterwave fly flyio frameio freshbooks freemius gcp github gitlab gitter gocardless google grafana groq
    harness hashicorp heroku hubspot huggingface infracost intercom jfrog artifactory bintray xray klaviyo
    launchdarkly linear linkedin lob looker mailchimp mailgun mandrill mapbox mattermost maxmind messagebird meraki
    mistral netlify newrelic ngrok notion npm nuget nytimes octopus okta onepassword openai openshift pagerduty
    paypal perplexity pinecone plaid planetscale postman prefect privateai pulumi pusher pypi rapidapi readme
    replicate rollbar rubygems salesforce scalingo segment sendbird sendgrid sendinblue brevo sentry settlemint
    shippo shopify sidekiq slack snowflake snyk sonar sonarqube sonarcloud sourcegraph square squarespace stripe
    sumologic sumo supabase telegram terraform travis travisci trello twilio twitch twitter typeform vault vercel
    yandex zapier zendesk zoom
    """.split()
)

SECRET_WORDS: frozenset[str] = frozenset(
    """
    key apikey token secret secrets password passwd passphrase pwd pass credential credentials creds auth
    authorization bearer private dsn license
    """.split()
)

# The words that name a credential outright: enough context even for a UUID or a hex string.
STRONG_SECRET_WORDS: frozenset[str] = frozenset(
    "key apikey token secret secrets password passwd passphrase pwd credential credentials creds".split()
)

NOT_SECRET_QUALIFIERS: frozenset[str] = frozenset(
    """
    cache idempotency primary foreign public partition sort dedupe dedup composite unique row map dict lookup
    hash object bucket index shard routing group max input output total prompt completion csrf next page
    continuation sync refresh_interval id ssh gpg pgp host known api_version version
    """.split()
)

# Public, non-secret id formats that happen to look random.
ID_PREFIXES: tuple[str, ...] = (
    "toolu_", "srvtoolu_", "msg_", "req_", "call_", "chatcmpl-", "run_", "asst_", "thread_", "file-", "batch_",
    "evt_", "cus_", "pi_", "ch_", "price_", "prod_", "sub_", "in_", "acct_", "txn_", "seti_", "pm_", "src_",
    "AIDA", "AROA", "AGPA", "ANPA", "ANVA", "AIPA", "APKA", "ASCA",  # AWS ids of users, roles... (not keys)
    "h1:", "sha1:", "sha256:", "sha512:", "md5:",  # digests with their algorithm
    "agent_msg_", "sha1-", "sha256-", "sha384-", "sha512-", "bafy", "bafk", "bafz", "k51qzi5uqu5",
)  # fmt: skip
