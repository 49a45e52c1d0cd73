"""The trust policy's rules one by one, in process: registry bindings, the file and its
warnings, anchors, entries that cover later ones (the mutation score of
``trust/policy.py`` rests on this file and the other policy tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.trust.policy import (
    REGISTRY_OWNERS_FILE,
    AuthorPolicy,
    RegistryBinding,
    TrustPolicy,
    _is_escaped,
    anchored_form,
    file_warnings,
    lint_policy_source,
    load_policy,
    parse_registry_bindings,
    repository_key,
)

from .helpers import ROOT_SHAPE

ACME = AuthorPolicy(owner="acme", identity="https://x")
POLICY = TrustPolicy(authors=(ACME,))


def _bindings(text: str, tmp_path: Path) -> tuple[tuple[RegistryBinding, ...], tuple[str, ...]]:
    return parse_registry_bindings(text, path=tmp_path / REGISTRY_OWNERS_FILE, policy=POLICY)


def test_registry_bindings_are_read(tmp_path: Path) -> None:
    text = (
        "# which owner judges copies\n"
        '[[registries]]\nrepository = "ghcr.io/acme/echo"\nowner = "acme"\n\n'
        '[[registries]]\nrepository = "Reg.Example:5000/p/x"\nowner = "nobody"\n'
    )
    bindings, warnings = _bindings(text, tmp_path)
    assert bindings == (
        RegistryBinding("ghcr.io/acme/echo", "acme", 2),
        RegistryBinding("Reg.Example:5000/p/x", "nobody", 6),
    )
    path = tmp_path / REGISTRY_OWNERS_FILE
    assert warnings == (
        f"WARNING: {path}:6: Reg.Example:5000/p/x is bound to owner 'nobody', which has no "
        "[[authors]] entry in the trust policy: its copies get the default mode",
    )
    assert _bindings("", tmp_path) == ((), ())


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("[[registries]\n", 1, 13, "invalid TOML"),
        ("x = " + "[" * 2000, 1, 1, "invalid TOML: values nested too deeply"),
        ('other = 1\n', 1, 1, "unknown key `other` (expected [[registries]])"),
        ('registries = 1\n', 1, 1, "`registries` must be an array of tables"),
        ('registries = [1]\n', 1, 1, "`registries` must be an array of tables"),
        ('[[registries]]\nrepository = "h/p"\nowner = "a"\nx = 1\n', 4, 1,
         "unknown key `x` in registries[0] (expected one of repository, owner)"),
        ('[[registries]]\nowner = "a"\n', 1, 1, "registries[0] has no `repository`"),
        ('[[registries]]\nrepository = "h/p"\n', 1, 1, "registries[0] has no `owner`"),
        ('[[registries]]\nrepository = 1\nowner = "a"\n', 2, 1,
         "`registries[0].repository` must be a string"),
        ('[[registries]]\nrepository = "h/p"\nowner = 2\n', 3, 1,
         "`registries[0].owner` must be a string"),
        ('[[registries]]\nrepository = "oci://h/p:1"\nowner = "a"\n', 2, 1,
         "registries[0].repository 'oci://h/p:1' is not a registry repository: write "
         "host/path (`registry.example.com/plugins/echo`), without oci://, tag or digest"),
        ('[[registries]]\nrepository = "h/p"\nowner = "a b"\n', 3, 1,
         "registries[0].owner 'a b' is not a GitHub owner name ([A-Za-z0-9._-])"),
        ('[[registries]]\nrepository = "h/p"\nowner = "a"\n'
         '[[registries]]\nrepository = "H/p"\nowner = "b"\n', 5, 1,
         "registries[1] binds H/p again (first bound at line 1); one owner per repository"),
    ],
)  # fmt: skip
def test_invalid_registry_bindings(
    tmp_path: Path, text: str, line: int, column: int, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _bindings(text, tmp_path)
    path = tmp_path / REGISTRY_OWNERS_FILE
    assert caught.value.kind == "policy_invalid"
    assert caught.value.message.startswith(
        f"{path}:{line}:{column}: invalid registry bindings: {message}"
    ), caught.value.message
    assert caught.value.details["line"] == line
    assert caught.value.details["path"] == str(path)


def test_repository_keys_compare_hosts_case_insensitively() -> None:
    assert repository_key("Reg.Example:5000/Plugins/Echo") == "reg.example:5000/Plugins/Echo"
    policy = TrustPolicy(
        registry_bindings=(RegistryBinding("GHCR.io/acme/echo", "acme"),
                           RegistryBinding("ghcr.io/acme/other", "other")),
    )  # fmt: skip
    assert policy.registry_owner("ghcr.io/acme/echo") == "acme"
    assert policy.registry_owner("ghcr.io/acme/other") == "other"
    assert policy.registry_owner("ghcr.io/ACME/echo") is None
    assert policy.registry_owner("ghcr.io/acme/none") is None


def test_load_policy_reads_the_bindings_beside_it(tmp_path: Path) -> None:
    policy_path = tmp_path / "trusted_keys.toml"
    policy_path.write_text(
        'schema_version = "1.0"\n[[authors]]\nowner = "acme"\nidentity = "https://x"\n'
    )
    (tmp_path / REGISTRY_OWNERS_FILE).write_text(
        '[[registries]]\nrepository = "ghcr.io/acme/echo"\nowner = "acme"\n'
    )
    policy = load_policy(policy_path)
    assert policy.registry_bindings == (RegistryBinding("ghcr.io/acme/echo", "acme", 1),)
    assert policy.source == policy_path
    assert policy.location == policy_path
    assert policy.warnings == ()
    (tmp_path / REGISTRY_OWNERS_FILE).chmod(0o666)
    warned = load_policy(policy_path)
    assert warned.warnings == file_warnings(tmp_path / REGISTRY_OWNERS_FILE)
    assert len(warned.warnings) == 1
    # No policy file: the default, with the bindings beside where it would be.
    missing = load_policy(tmp_path / "absent" / "trusted_keys.toml")
    assert (missing.default, missing.authors, missing.source) == ("warn", (), None)
    assert missing.location == tmp_path / "absent" / "trusted_keys.toml"


def test_a_missing_policy_named_explicitly_is_invalid(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    with pytest.raises(ConfigError) as caught:
        load_policy(path, explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert caught.value.message == (
        f"{path}: trust policy does not exist (named by --trusted-keys)"
    )
    assert caught.value.details == {"path": str(path)}


@pytest.mark.parametrize("which", ["policy", "bindings"])
def test_files_that_are_not_utf8_are_invalid(tmp_path: Path, which: str) -> None:
    policy_path = tmp_path / "trusted_keys.toml"
    policy_path.write_text('schema_version = "1.0"\n')
    target = policy_path if which == "policy" else tmp_path / REGISTRY_OWNERS_FILE
    target.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError) as caught:
        load_policy(policy_path)
    what = "trust policy" if which == "policy" else "registry bindings"
    assert caught.value.message == f"{target}:1:1: invalid {what}: not UTF-8 text"
    assert caught.value.details == {"path": str(target), "line": 1}
    assert caught.value.kind == "policy_invalid"


def test_file_warnings(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_text("")
    path.chmod(0o644)
    assert file_warnings(path) == ()
    path.chmod(0o646)
    assert file_warnings(path) == (
        f"WARNING: the trust policy {path} is writable by every user (mode 646); run chmod "
        "o-w on it",
    )
    link = tmp_path / "link.toml"
    link.symlink_to(path)
    path.chmod(0o644)
    assert file_warnings(link) == (
        f"WARNING: the trust policy {link} is a symbolic link (to {path}); whoever can change "
        "the link or its target decides whom installs trust",
    )
    dangling = tmp_path / "dangling.toml"
    dangling.symlink_to(tmp_path / "nowhere")
    assert len(file_warnings(dangling)) == 1
    assert file_warnings(tmp_path / "absent") == ()


@pytest.mark.parametrize(
    ("pattern", "index", "escaped"),
    [("a$", 1, False), ("a\\$", 2, True), ("a\\\\$", 3, False), ("a\\\\\\$", 4, True),
     ("$", 0, False), ("\\$", 1, True), ("\\x\\", 1, True)],
)  # fmt: skip
def test_escapes(pattern: str, index: int, escaped: bool) -> None:
    assert _is_escaped(pattern, index) is escaped


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [
        ("^a$", None),
        ("\\Aa\\z", None),
        ("^a\\z", None),
        ("a", "^a$"),
        ("^a", "^a$"),
        ("a$", "^a$"),
        ("a\\$", "^a\\$$"),
        ("^a\\\\z", "^a\\\\z$"),  # a backslash, then z: no anchor
        ("^a\\\\\\z", None),
        ("a|b", "^(?:a|b)$"),
        ("^a|b$", "^(?:^a|b$)$"),
        ("^a|b", "^(?:^a|b)$"),
        ("^a$|^b$", None),
        ("^a[|]b$", None),
        ("^a[]|]b$", None),
        ("^a[[:alpha:]|]b$", None),
        ("^(a|b)$", None),
        ("^a\\Q|\\Eb$", None),
        ("^a\\Qb$", "^a\\Qb$\\E$"),
    ],
)
def test_anchored_forms(pattern: str, anchored: str | None) -> None:
    assert anchored_form(pattern) == anchored


def test_covers() -> None:
    any_repo = AuthorPolicy(owner="acme", identity="a")
    echo = AuthorPolicy(owner="ACME", identity="b", repos=("Echo",))
    both = AuthorPolicy(owner="acme", identity="c", repos=("echo", "x"))
    assert any_repo.covers(echo)
    assert not echo.covers(any_repo)
    assert echo.covers(AuthorPolicy(owner="acme", identity="d", repos=("echo",)))
    assert not echo.covers(both)
    assert both.covers(echo)
    assert not any_repo.covers(AuthorPolicy(owner="other", identity="e"))
    policy = TrustPolicy(authors=(echo, any_repo, both))
    assert policy.authors_for("Acme") == (echo, any_repo)
    assert policy.authors_for(None) == ()


def test_lint_of_an_editor_buffer(tmp_path: Path) -> None:
    """The file system is looked at only when the buffer's directory exists."""
    text = 'schema_version = "1.0"\ntrusted_root = "root.json"\n'
    here = lint_policy_source(text, path=str(tmp_path / "trusted_keys.toml"))
    assert [d.code for d in here.diagnostics] == ["NXT008"]
    assert here.path == str(tmp_path / "trusted_keys.toml")
    nowhere = lint_policy_source(text, path=str(tmp_path / "absent" / "trusted_keys.toml"))
    assert nowhere.diagnostics == ()
    assert (here.source, nowhere.source) == (text, text)
    too_long = lint_policy_source(text, path="/" + "x" * 5000 + "/trusted_keys.toml")
    assert too_long.diagnostics == ()


H = 'schema_version = "1.0"\n'
DIAGNOSTICS = {
    "no-owner": (H + '[[authors]]\nidentity = "x"\n',
                 [("NXT005", "authors[0] has no `owner`", "authors[0]", 2, 1)]),
    "inline-no-owner": (H + 'authors = [{identity = "x"}]\n',
                        [("NXT005", "authors[0] has no `owner`", "authors[0]", 2, 12)]),
    "unanchored": (
        H + '[[authors]]\nowner = "acme"\nidentity_regexp = "https://github\\\\.com/acme/.*"\n',
        [("NXT010", "authors[0].identity_regexp is not anchored: cosign and the reference "
          "installer would accept any identity containing a match; write identity_regexp = "
          '"^https://github\\\\.com/acme/.*$"', "authors[0].identity_regexp", 4, 1)],
    ),
    "empty-repos": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nrepos = []\n',
        [("NXT004", "authors[0].repos is empty and would trust no repository; omit it to "
          "trust every repository of the owner", "authors[0].repos", 5, 1)],
    ),
    "bad-repos": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nrepos = ["acme/echo", "a..b", "ok"]\n',
        [("NXT004", "authors[0].repos has names that are not GitHub repository names: "
          "'acme/echo', 'a..b' (use the bare name, no owner)", "authors[0].repos", 5, 1)],
    ),
    "shadowed": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\n\n[[authors]]\nowner = "ACME"\n'
        'identity = "y"\n',
        [("NXT012", "authors[1] for owner 'ACME' is ignored: the entry at line 2 comes first "
          "for that owner and decides, as in the reference installer", "authors[1]", 6, 1)],
    ),
    "no-compile": (
        H + '[[authors]]\nowner = "acme"\nidentity_regexp = "^(?=x)$"\n',
        [("NXT007", "authors[0].identity_regexp does not compile (RE2 syntax): invalid perl "
          "operator: (?=", "authors[0].identity_regexp", 4, 1)],
    ),
    "inline-multiline-flag": (
        H + '[[authors]]\nowner = "acme"\nidentity_regexp = "(?m)^https://github.com/acme/x$"\n',
        # A warning, not a refusal (the reference installer uses the pattern as written); the
        # pattern's `^` is a line start under the flag, so it is not anchored either.
        [("NXT010", "authors[0].identity_regexp is not anchored: cosign and the reference "
          "installer would accept any identity containing a match; write identity_regexp = "
          '"^(?m)^https://github.com/acme/x$"', "authors[0].identity_regexp", 4, 1),
         ("NXT014", "authors[0].identity_regexp '(?m)^https://github.com/acme/x$' turns on the "
          "inline flag `m` (`(?m)`), under which `^` and `$` also match at a line break, so the "
          "pattern can accept an identity holding one (cosign and the reference installer, "
          "which search, accept `x\\nevil` for `(?m)^x$`); remove the flag",
          "authors[0].identity_regexp", 4, 1)],
    ),
    "inline-dotall-flag": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nsource_ref = "^refs/tags/(?s).*$"\n',
        [("NXT014", "authors[0].source_ref '^refs/tags/(?s).*$' turns on the inline flag `s` "
          "(`(?s)`), under which `.` also matches a line break, so the pattern can accept a ref "
          "holding one; remove the flag", "authors[0].source_ref", 5, 1)],
    ),
    "syntax": (H + "[[authors]\n", [("NXT001", "invalid TOML: Expected ']]' at the end of an "
                                    "array declaration", "", 2, 10)]),
    "modes": (
        H + 'default = "loud"\n[[authors]]\nowner = "acme"\nidentity = "x"\nmode = 3\n',
        [("NXT004", "`default` must be one of ignore, warn, require (got 'loud')", "default",
          2, 1),
         ("NXT003", "`authors[0].mode` must be a string", "authors[0].mode", 6, 1)],
    ),
    "author-mode": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nmode = "loud"\n',
        [("NXT004", "`authors[0].mode` must be one of ignore, warn, require (got 'loud')",
          "authors[0].mode", 5, 1)],
    ),
    "no-identity": (H + '[[authors]]\nowner = "acme"\n',
                    [("NXT005", "authors[0] has no identity: set `identity_regexp` or "
                      "`identity`", "authors[0]", 2, 1)]),
    "signer-workflow": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nsigner_workflow = "acme/echo/x.yml"\n',
        [("NXT004", "authors[0].signer_workflow 'acme/echo/x.yml' is not "
          "OWNER/REPO/.github/workflows/FILE.yml", "authors[0].signer_workflow", 5, 1)],
    ),
    "empty-owner": (H + '[[authors]]\nowner = ""\nidentity = "x"\n',
                    [("NXT004", "`authors[0].owner` must not be empty", "authors[0].owner",
                      3, 1)]),
    "source-ref": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nsource_ref = "(?=x)"\n',
        [("NXT007", "authors[0].source_ref does not compile (RE2 syntax): invalid perl "
          "operator: (?=", "authors[0].source_ref", 5, 1)],
    ),
    "allow-republish": (
        H + '[[authors]]\nowner = "acme"\nidentity = "x"\nallow_republish = "yes"\n',
        [("NXT003", "authors[0].allow_republish must be true or false",
          "authors[0].allow_republish", 5, 1)],
    ),
    "schema-type": ("schema_version = 1\n",
                    [("NXT003", "`schema_version` must be a string", "schema_version", 1, 1)]),
    "schema-unknown": ('schema_version = "2.0"\n', [(
        "NXT011", "schema_version '2.0' is not one nexo-pkg knows (known: 1.0); the policy is "
        "read as 1.0, as the reference installer reads it", "schema_version", 1, 1)]),
    "cosign-binary": (H + 'cosign_binary = "cosign"\n', [(
        "NXT009", "`cosign_binary` is ignored: signatures are verified natively",
        "cosign_binary", 2, 1)]),
    "authors-type": (H + "authors = 3\n", [(
        "NXT003", "`authors` must be an array of tables ([[authors]])", "authors", 2, 1)]),
    "unknown-top": (H + "surprise = 1\n", [(
        "NXT002", "unknown key `surprise` (expected one of schema_version, default, "
        "cosign_binary, trusted_root, authors)", "surprise", 2, 1)]),
    "unknown-in-entry": (H + '[[authors]]\nowner = "acme"\nidentity = "x"\nsurprise = 1\n', [(
        "NXT002", "unknown key `surprise` in authors[0] (expected one of owner, "
        "identity_regexp, identity, oidc_issuer, repos, mode, signer_workflow, predicate_type, "
        "source_ref, allow_republish)", "authors[0].surprise", 5, 1)]),
    "default-type": (H + "default = 1\n",
                     [("NXT003", "`default` must be a string", "default", 2, 1)]),
    "nested": (H + "x = " + "[" * 2000 + "\n",
               [("NXT001", "invalid TOML: values nested too deeply", "", 1, 1)]),
    "email-identity": (
        H + '[[authors]]\nowner = "acme"\nidentity = "release@acme.example"\n'
        'oidc_issuer = "https://accounts.google.com"\n',
        [("NXT013", "authors[0].identity 'release@acme.example' is an e-mail address: its "
          "certificates name no source repository, so nothing binds them to the entry's owner "
          "and this entry trusts no signature; trust the owner's release workflow instead "
          "(identity_regexp, as `nexo plugin trust add OWNER/REPO` writes it)",
          "authors[0].identity", 4, 1)],
    ),
    "owner-type": (H + '[[authors]]\nowner = 1\nidentity = "x"\n',
                   [("NXT003", "`authors[0].owner` must be a string", "authors[0].owner", 3, 1)]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DIAGNOSTICS))
def test_each_finding_names_its_key_and_place(case: str) -> None:
    text, expected = DIAGNOSTICS[case]
    result = lint_policy_source(text, path="/nonexistent/trusted_keys.toml")
    found = [
        (d.code, d.message, d.key_path, d.span.start.line, d.span.start.column)
        for d in result.diagnostics
    ]
    assert found == expected
    for diagnostic in result.diagnostics:
        assert diagnostic.url == (
            "https://github.com/nexo-pkg/nexo-pkg/blob/main/docs/trust.md#"
            f"{diagnostic.code.lower()}-{diagnostic.name}"
        )


@pytest.mark.parametrize(
    ("identity", "email"),
    [
        ("release@acme.example", True),
        (" x@example.com ", True),
        ("https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1", False),
        ("acme/echo/.github/workflows/release.yml@refs/heads/main", False),
        ("spiffe://acme.example/ns/x@y", False),
        ("mailto:x@example.com", False),
        ("x", False),
        ("RELEASE@ACME.EXAMPLE", True),
        ("release@bücher.example", True),
        ("release@xn--bcher-kva.example", True),
        ('"john doe"@example.com', True),
        ('"a@b:c/d"@example.com', True),
        ('"a\\"b"@example.com', True),
        # The real fixtures' signers: release, integration and reusable workflows.
        (
            "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2",
            False,
        ),
        (
            "https://github.com/too-legit/attest/.github/workflows/integration.yml@refs/heads/main",
            False,
        ),
        (
            "https://github.com/github/artifact-attestations-workflows/.github/workflows/"
            "attest.yml@09b495c3f12c7881b3cc17209a327792065c1a1d",
            False,
        ),
    ],
)
def test_only_an_e_mail_identity_is_said_to_trust_nothing(identity: str, email: bool) -> None:
    """SPEC §6, the owner is always bound: certificates issued to an e-mail address name no
    source repository (claims.py `_owner_reason`), so such an entry can never trust anything;
    a workflow URI carries `@` too and must not be taken for one. A warning only: the
    policy still loads (the reference installer reads it)."""
    from nexo_pkg.trust.policy import parse_policy

    text = H + f"[[authors]]\nowner = \"acme\"\nidentity = '{identity}'\n"
    result = lint_policy_source(text, path="/nonexistent/trusted_keys.toml")
    codes = [(d.code, d.severity) for d in result.diagnostics]
    assert codes == ([("NXT013", "warning")] if email else [])
    (author,) = parse_policy(text, path=Path("/nonexistent/trusted_keys.toml")).authors
    assert author.identity == identity


def test_an_entry_with_a_pattern_has_no_identity(tmp_path: Path) -> None:
    from nexo_pkg.trust.policy import parse_policy

    text = H + '[[authors]]\nowner = "acme"\nidentity_regexp = "^x$"\n'
    (author,) = parse_policy(text, path=tmp_path / "trusted_keys.toml").authors
    assert (author.identity, author.identity_regexp) == (None, "^x$")
    text = H + '[[authors]]\nowner = "acme"\nidentity = "x"\n'
    (author,) = parse_policy(text, path=tmp_path / "trusted_keys.toml").authors
    assert (author.identity, author.identity_regexp) == ("x", None)


def test_load_policy_warns_about_a_policy_file_others_may_write(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_text(H)
    path.chmod(0o666)
    assert load_policy(path).warnings == file_warnings(path)
    assert len(file_warnings(path)) == 1


def test_invalid_bindings_beside_a_policy_name_their_file(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_text(H)
    bindings = tmp_path / REGISTRY_OWNERS_FILE
    bindings.write_text("x = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    assert caught.value.message.startswith(f"{bindings}:1:1: invalid registry bindings: ")


def test_every_key_of_an_entry_is_read(tmp_path: Path) -> None:
    from nexo_pkg.trust.policy import parse_policy

    text = (
        H + "\n[[authors]]\n"
        'owner = "acme"\nidentity = "x"\nrepos = ["echo"]\nmode = "require"\n'
        'signer_workflow = "acme/echo/.github/workflows/release.yml"\n'
        'predicate_type = "https://x/v1"\nsource_ref = "refs/tags/v.*"\nallow_republish = true\n'
    )
    (entry,) = parse_policy(text, path=tmp_path / "trusted_keys.toml").authors
    assert entry == AuthorPolicy(
        owner="acme",
        identity="x",
        repos=("echo",),
        mode="require",
        line=3,
        signer_workflow="acme/echo/.github/workflows/release.yml",
        predicate_type="https://x/v1",
        source_ref="refs/tags/v.*",
        allow_republish=True,
    )


def test_an_invalid_policy_lists_every_error(tmp_path: Path) -> None:
    from nexo_pkg.trust.policy import parse_policy

    path = tmp_path / "trusted_keys.toml"
    text = H + '[[authors]]\nowner = ""\nidentity = "x"\nmode = 3\n'
    with pytest.raises(ConfigError) as caught:
        parse_policy(text, path=path)
    assert caught.value.message == (
        f"{path}:3:1: invalid trust policy: `authors[0].owner` must not be empty (and 1 more)"
    )
    assert caught.value.details["path"] == str(path)
    assert caught.value.details["line"] == 3
    assert [d["code"] for d in caught.value.details["diagnostics"]] == ["NXT004", "NXT003"]


def test_every_top_level_key_is_read(tmp_path: Path) -> None:
    from nexo_pkg.trust.policy import parse_policy

    (tmp_path / "root.json").write_text(ROOT_SHAPE)
    text = (
        'schema_version = "1.0"\ndefault = "require"\ncosign_binary = "cosign"\n'
        'trusted_root = "root.json"\n'
    )
    policy = parse_policy(text, path=tmp_path / "trusted_keys.toml")
    assert (policy.default, policy.schema_version, policy.cosign_binary) == (
        "require",
        "1.0",
        "cosign",
    )
    assert policy.trusted_root == tmp_path / "root.json"
    assert policy.authors == ()
    missing = 'schema_version = "1.0"\ntrusted_root = "none.json"\n'
    with pytest.raises(ConfigError) as caught:
        parse_policy(missing, path=tmp_path / "trusted_keys.toml")
    assert caught.value.message == (
        f"{tmp_path / 'trusted_keys.toml'}:2:1: invalid trust policy: trusted_root 'none.json' "
        f"does not exist (looked for {tmp_path / 'none.json'})"
    )
    (tmp_path / "none.json").mkdir()
    with pytest.raises(ConfigError) as caught:
        parse_policy(missing, path=tmp_path / "trusted_keys.toml")
    assert caught.value.kind == "policy_invalid"
    assert caught.value.message.endswith(
        f"trusted_root 'none.json' is not a regular file ({tmp_path / 'none.json'})"
    )


@pytest.mark.parametrize(
    ("key", "pattern"),
    [
        ("identity_regexp", "(?s)^https://github.com/acme/.*$"),
        ("source_ref", "^refs/tags/(?m)v.*$"),
    ],
)
def test_a_pattern_with_a_line_break_flag_is_a_warning_and_the_policy_loads(
    key: str, pattern: str
) -> None:
    """NXT014 warns of `(?m)`/`(?s)`: the reference installer reads the pattern as written, so
    the policy is still used (`trust add` refuses to write one: test_trust_cli.py)."""
    from nexo_pkg.trust.policy import parse_policy

    identity = "" if key == "identity_regexp" else 'identity = "x"\n'
    text = H + f"[[authors]]\nowner = \"acme\"\n{identity}{key} = '{pattern}'\n"
    result = lint_policy_source(text, path="/nonexistent/trusted_keys.toml")
    assert ("NXT014", "warning") in [(d.code, d.severity) for d in result.diagnostics]
    assert not [d for d in result.diagnostics if d.severity == "error"]
    (author,) = parse_policy(text, path=Path("/nonexistent/trusted_keys.toml")).authors
    assert pattern in (author.identity_regexp, author.source_ref)
