"""Real-looking, harmless AGENTS.md / CLAUDE.md / .cursorrules / .mdc files: the scan must pass
every one. They mention secrets, system prompts, ignoring folders and the main branch, use
HTML comments as TODOs and tool directives, and are written in several languages and with
emoji, as real project files are."""

from __future__ import annotations

CORPUS: dict[str, str] = {
    "python-style.AGENTS.md": """# AGENTS.md

## Code style
- Python 3.11+, type hints everywhere; run `ruff check .` and `ruff format .` before committing.
- Prefer `pathlib.Path` over `os.path`. Keep functions under 40 lines.
- Never commit secrets. Credentials come from environment variables (see `.env.example`).

## Tests
Run `pytest -q`. A change without a test will be sent back in review.
""",
    "repo-layout.AGENTS.md": """# Repository layout

| Path | What |
|---|---|
| `src/app/` | the FastAPI service |
| `src/app/models/` | SQLAlchemy models |
| `migrations/` | Alembic migrations, never edit an applied one |
| `build/` | generated; ignore the build folder when searching |

Ignore `node_modules/` and `dist/` too. The previous layout (`app/` at the root) is gone.
""",
    "git-rules.CLAUDE.md": """# Working with git

- Do not push to main. Open a pull request from a feature branch.
- Do not force-push shared branches.
- Commit messages: imperative mood, under 72 characters in the subject line.
- If pre-commit fails, fix the cause; do not skip hooks with `--no-verify`.
""",
    "llm-app.AGENTS.md": """# Chatbot service

The system prompt for the support bot lives in `prompts/system.md`; edit it there, not in code.
`make prompt-test` renders the system prompt with sample data and runs the eval suite.
The model's instructions are versioned: bump `PROMPT_VERSION` when you change them.
Never log user messages at INFO level.
""",
    "todo-comments.AGENTS.md": """<!-- TODO(alice): document the release process -->
# Contributing

<!-- markdownlint-disable MD013 -->
Run `make check` before you open a pull request.
<!-- prettier-ignore -->
| a | b |
|---|---|
<!-- BEGIN GENERATED: do not edit by hand -->
- `make docs`: builds the site
<!-- END GENERATED -->
<!-- TODO: explain how the auth token is refreshed -->
""",
    "security.AGENTS.md": """# Security guidance

- Never commit `.env`, private keys or tokens; the pre-commit hook scans for them.
- Do not print secrets in logs or test output.
- API keys are read from `$STRIPE_API_KEY` at runtime; use the test key locally.
- Report vulnerabilities to security@example.com, not in public issues.
- Don't disable TLS verification, even in tests.
""",
    "german.CLAUDE.md": """# Projektregeln

Bitte schreibe Tests mit pytest. Verwende keine globalen Variablen.
Änderungen an der Datenbank immer über Migrationen. Geheimnisse gehören nicht ins Repository.
Vor dem Commit: `make lint` ausführen. Überprüfe die Übersetzungen in `locale/de/`.
""",
    "french.AGENTS.md": """# Règles du projet

Écris des tests pour chaque correction. N'ignore pas les avertissements du compilateur.
Les instructions de déploiement sont dans `docs/deploiement.md`. Ne pousse jamais sur `main`.
""",
    "chinese.AGENTS.md": """# 项目说明

请使用 pytest 运行测试，提交前执行 `make lint`。
不要把密钥提交到仓库；配置放在环境变量里。
目录结构：`src/` 是源代码，`docs/` 是文档。忽略 `build/` 目录。
""",
    "japanese.CLAUDE.md": """# 開発ガイド

テストは `npm test` で実行します。コミット前に `npm run lint` を実行してください。
秘密情報をコミットしないでください。葛󠄀飾区の住所データは `data/` にあります。
""",
    "korean.AGENTS.md": """# 개발 규칙

테스트는 `go test ./...` 로 실행합니다. main 브랜치에 직접 푸시하지 마세요.
비밀 키는 저장소에 커밋하지 않습니다.
""",
    "russian.AGENTS.md": """# Правила проекта

Перед коммитом запускайте `make test`. Не храните пароли в коде.
Предыдущие инструкции по сборке устарели, используйте `docs/build.md`.
""",
    "persian.AGENTS.md": """# راهنما

می‌خواهم همه تست‌ها قبل از ادغام اجرا شوند. کلیدها را در مخزن قرار ندهید.
""",
    "hindi.AGENTS.md": """# परियोजना नियम

कृपया हर बदलाव के लिए परीक्षण लिखें। क्‍या आपने `make test` चलाया?
""",
    "emoji.AGENTS.md": """# Team norms ❤️

- ✅ Small PRs, one topic each
- ⚠️ Migrations need a second reviewer
- 🚀 Deploys happen Tuesdays
- 1️⃣ First, read `docs/setup.md`
- 👩‍💻 Pair on anything touching billing
- 🏳️‍🌈 Be kind. 🏴󠁧󠁢󠁳󠁣󠁴󠁿 UK office hours apply.
- ☺︎ Text-style smiley is fine too
""",
    "cursorrules": """You are an expert in TypeScript, React and Next.js.

- Use functional components and hooks; no class components.
- Prefer server components; add 'use client' only when needed.
- Follow the existing folder structure in app/.
- When unsure, ask before adding a dependency.
- Ignore files under .next/ and coverage/.
""",
    "react.mdc": """---
description: React conventions
globs: ["src/**/*.tsx"]
---
- Components are PascalCase, hooks start with `use`.
- Do not show the user raw error objects; render <ErrorBanner/> instead.
- Keep props interfaces next to the component.
""",
    "go.AGENTS.md": """# Go service

`go vet ./... && go test -race ./...` must pass. Errors are wrapped with `fmt.Errorf("...: %w", err)`.
Do not use `panic` outside `main`. Context is the first argument of every exported function.
""",
    "rust.CLAUDE.md": """# Rust crate

cargo fmt, cargo clippy -- -D warnings, cargo test. No `unwrap()` in library code.
Unsafe blocks need a `// SAFETY:` comment explaining the invariant.
""",
    "install.AGENTS.md": """# Setup

Install uv: `curl -LsSf https://astral.sh/uv/install.sh -o install.sh`, read it, then run it.
Then `uv sync`. Copy `.env.example` to `.env` and fill in your own keys.
Use `cat README.md` for an overview and `head -n 50 CHANGELOG.md` for recent changes.
""",
    "debugging.AGENTS.md": """# Debugging

Set `LOG_LEVEL=debug`. To see the request the bot sends, run `make print-prompt`; it prints the
rendered system prompt and the tool schemas. Ignore warnings from `urllib3` about retries.
Skip the flaky e2e suite locally with `-m "not e2e"`.
""",
    "style-rules.CLAUDE.md": """# Writing style for answers

- Never tell the user 'it works' without running the tests.
- Do not show the user raw stack traces; summarise the error.
- Tell the user which files you changed.
- Keep it short.
""",
    "data-science.AGENTS.md": """# Notebooks

Clear outputs before committing (`nbstripout` runs in pre-commit). Data lives in `s3://team-bucket/`,
never in git. Use polars, not pandas, for new code. Random seeds: 42 everywhere.
""",
    "monorepo.AGENTS.md": """# Monorepo

Packages: `packages/ui`, `packages/api`, `packages/shared`. Run `pnpm -r test`.
Changes to `packages/shared` need a changeset (`pnpm changeset`).
Override the default lint rules only in `packages/*/eslint.config.js`, with a comment why.
""",
    "api-docs.AGENTS.md": """# API conventions

Every endpoint has an OpenAPI description. Errors use RFC 7807 problem details.
Authentication: bearer tokens issued by the auth service; never accept tokens in query strings.
Rate limits: 100 requests per minute per token; return 429 with `Retry-After`.
""",
    "docs-site.AGENTS.md": """# Documentation site

Pages are Markdown in `docs/`. Build with `mkdocs build --strict`.
<!-- Keep this list alphabetical -->
- [Architecture](docs/architecture.md)
- [Deployment](docs/deploy.md)
<!-- TODO: add screenshots of the admin panel -->
Hidden pages go in `docs/_drafts/` and are excluded from the nav.
""",
    "html-snippets.AGENTS.md": """# Front-end notes

Use `<details>` for long examples:

<details>
<summary>Example</summary>

```html
<div class="card">Content</div>
```
</details>

Visually hidden labels use the `sr-only` class, not inline styles.
""",
    "ops.AGENTS.md": """# Operations

Deploy with `make deploy ENV=staging`. Production deploys need an approved change ticket.
Logs: `kubectl logs -l app=api --tail=100`. Do not run migrations by hand in production.
If a deploy fails, roll back first and investigate after.
""",
    "review.AGENTS.md": """# Code review checklist

1. Tests cover the change.
2. No secrets, tokens or passwords in the diff.
3. Public functions are documented.
4. The previous behaviour is preserved unless the PR says otherwise.
5. Repeat the steps above for every package you touched.
""",
    "mobile.CLAUDE.md": """# iOS app

SwiftUI only. Run tests with `xcodebuild test -scheme App`. Localise every user-facing string.
Don't hardcode colours; use the asset catalogue. Screenshots for the store live in `fastlane/`.
""",
    "agents-meta.AGENTS.md": """# Notes for coding agents

This file is read by AI coding agents. Keep it short and factual.
Run the narrowest test that covers your change first, then the full suite.
Prefer editing existing files to creating new ones. Ask when requirements are unclear.
""",
    "versions.AGENTS.md": """# Versions

Python 3.12, Node 20, Postgres 16. Use `v2` of the API client (`client_v2.py`); `v1` is
deprecated. Target x86_64 and arm64. Use UTF-8 everywhere. Example: 1 2 3 4 items per page.
""",
    "legacy.AGENTS.md": """# Legacy module

The `legacy/` package follows older conventions. Ignore the style rules above when editing it,
but keep its tests green. Disregard lint warnings in generated protobuf files.
""",
}
