"""Questions a new user would ask about the Mastra docs tree, each with the page that answers it.

Written from the page list alone, before any ranking was looked at (issue 16). The split is fixed:
``TUNE`` may be looked at while choosing a signal, ``HELD_OUT`` only to report it. Paths are
relative to ``shared/benchmarks/mastra-docs/en``; a question may accept more than one page.
"""

from __future__ import annotations

from typing import Final

Question = tuple[str, tuple[str, ...]]

QUESTIONS: Final[list[Question]] = [
    ("how do I add memory to an agent", ("docs/agents/agent-memory.mdx",)),
    (
        "how do I deploy my mastra app to vercel",
        ("docs/deployment/serverless-platforms/vercel-deployer.mdx",),
    ),
    (
        "how can an agent remember facts about the user across conversations",
        ("docs/memory/working-memory.mdx",),
    ),
    ("how do I suspend a workflow and resume it later", ("docs/workflows/suspend-and-resume.mdx",)),
    ("how do I write a custom scorer", ("docs/scorers/custom-scorers.mdx",)),
    ("how do I give my agent tools", ("docs/agents/using-tools-and-mcp.mdx",)),
    ("how do I stream tool output to the client", ("docs/streaming/tool-streaming.mdx",)),
    ("how do I protect my server with JWT authentication", ("docs/auth/jwt.mdx",)),
    (
        "how do I add custom HTTP routes to the mastra server",
        ("docs/server-db/custom-api-routes.mdx",),
    ),
    ("how do I add middleware to the server", ("docs/server-db/middleware.mdx",)),
    (
        "how do I split documents into chunks and embed them",
        ("docs/rag/chunking-and-embedding.mdx",),
    ),
    ("which vector databases can I store embeddings in", ("docs/rag/vector-databases.mdx",)),
    ("how do I retrieve relevant chunks and filter them by metadata", ("docs/rag/retrieval.mdx",)),
    ("how do I run workflow steps in parallel", ("docs/workflows/control-flow.mdx",)),
    (
        "how do I handle errors and retries in workflow steps",
        ("docs/workflows/error-handling.mdx",),
    ),
    (
        "how do I map the output of one step to the input of the next",
        ("docs/workflows/input-data-mapping.mdx",),
    ),
    ("how do I make a workflow sleep for some time", ("docs/workflows/pausing-execution.mdx",)),
    ("how do I convert text to speech", ("docs/voice/text-to-speech.mdx",)),
    ("how do I transcribe audio to text", ("docs/voice/speech-to-text.mdx",)),
    ("how do I enable tracing with OpenTelemetry", ("docs/observability/tracing.mdx",)),
    ("how do I configure logging", ("docs/observability/logging.mdx",)),
    ("how do I use mastra in a Next.js app", ("docs/frameworks/web-frameworks/next-js.mdx",)),
    (
        "how do I install mastra and create a new project",
        ("docs/getting-started/installation.mdx",),
    ),
    (
        "what is the folder structure of a mastra project",
        ("docs/getting-started/project-structure.mdx",),
    ),
    ("how do I run evals in continuous integration", ("docs/evals/running-in-ci.mdx",)),
    (
        "how do I change an agent's instructions based on runtime context",
        ("docs/agents/dynamic-agents.mdx",),
    ),
    ("how do I connect my agent to an MCP server", ("docs/tools-mcp/mcp-overview.mdx",)),
    (
        "how do I configure storage for memory threads with libsql or postgres",
        ("docs/server-db/storage.mdx",),
    ),
    (
        "how do I call my agents from a frontend with the client SDK",
        ("docs/server-db/mastra-client.mdx",),
    ),
    (
        "how do I recall relevant older messages with semantic search",
        ("docs/memory/semantic-recall.mdx",),
    ),
    (
        "how do I limit the tokens memory adds to the context",
        ("docs/memory/memory-processors.mdx",),
    ),
    (
        "how do I deploy to Cloudflare workers",
        ("docs/deployment/serverless-platforms/cloudflare-deployer.mdx",),
    ),
    (
        "how do I use an agent inside a workflow step",
        ("docs/workflows/using-with-agents-and-tools.mdx",),
    ),
    (
        "how do I modify input messages before the agent sees them",
        ("docs/agents/input-processors.mdx",),
    ),
    ("how do I run workflows with Inngest", ("docs/workflows/inngest-workflow.mdx",)),
    ("what parameters does the Agent constructor take", ("reference/agents/agent.mdx",)),
    ("what options does createTool accept", ("reference/tools/create-tool.mdx",)),
    ("example of a human in the loop workflow", ("examples/workflows/human-in-the-loop.mdx",)),
    ("what are the configuration options of the PgVector store", ("reference/rag/pg.mdx",)),
    ("what does the mastra dev command do", ("reference/cli/dev.mdx",)),
    ("how do I use the local development playground", ("docs/server-db/local-dev-playground.mdx",)),
    ("how do I use mastra with an express server", ("docs/frameworks/servers/express.mdx",)),
    ("example agent that analyses images", ("examples/agents/image-analysis.mdx",)),
    ("how do I create a memory thread from code", ("reference/memory/createThread.mdx",)),
    ("how do I stream events from a running workflow", ("docs/streaming/workflow-streaming.mdx",)),
    # Added 2026-12-01 (issue 29) to grow the held-out half from 22 to 35: written from the page
    # list alone (file paths and frontmatter titles of mastra-docs/en), for pages no earlier
    # question answers, and committed before any ranking was run on them. Appended, so the split
    # by parity keeps every earlier question where it was (13 more in each half).
    ("how do I deploy mastra to AWS Lambda", ("docs/deployment/cloud-providers/aws-lambda.mdx",)),
    (
        "how do I change an agent's response after the model generates it",
        ("docs/agents/output-processors.mdx",),
    ),
    (
        "how do I deploy to Netlify",
        (
            "docs/deployment/serverless-platforms/netlify-deployer.mdx",
            "reference/deployer/netlify.mdx",
        ),
    ),
    ("what options does Agent.generate accept", ("reference/agents/generate.mdx",)),
    ("how do I let my agent speak and listen with voice", ("docs/agents/adding-voice.mdx",)),
    (
        "how do I use a different LLM provider like Anthropic or Gemini",
        ("docs/getting-started/model-providers.mdx",),
    ),
    (
        "how do I use the Mastra docs MCP server in Cursor",
        ("docs/getting-started/mcp-docs-server.mdx", "reference/cli/mcp-docs-server.mdx"),
    ),
    (
        "example of a supervisor agent that delegates to other agents",
        ("examples/agents/supervisor-agent.mdx",),
    ),
    (
        "how do I coordinate several agents to solve a complex task",
        ("docs/networks-vnext/overview.mdx", "docs/networks-vnext/complex-task-execution.mdx"),
    ),
    ("what built-in scorers are available", ("docs/scorers/off-the-shelf-scorers.mdx",)),
    ("what parameters does the MCPClient take", ("reference/tools/mcp-client.mdx",)),
    ("how do I write a custom eval", ("docs/evals/custom-eval.mdx",)),
    (
        "how do I trace model calls and tool runs with AI tracing",
        ("docs/observability/ai-tracing.mdx",),
    ),
    ("how do I set up a project in Mastra Cloud", ("docs/mastra-cloud/setting-up.mdx",)),
    (
        "how do I deploy on an Amazon EC2 instance",
        ("docs/deployment/cloud-providers/amazon-ec2.mdx",),
    ),
    ("what are the options of the LibSQL storage", ("reference/storage/libsql.mdx",)),
    ("how do I deploy a monorepo", ("docs/deployment/monorepo.mdx",)),
    ("how do I use mastra with the Vercel AI SDK", ("docs/frameworks/agentic-uis/ai-sdk.mdx",)),
    (
        "how do I build a chat UI with assistant-ui",
        ("docs/frameworks/agentic-uis/assistant-ui.mdx",),
    ),
    (
        "example of hybrid vector search with metadata filters",
        ("examples/rag/query/hybrid-vector-search.mdx",),
    ),
    (
        "how do I persist and restore workflow state with snapshots",
        ("docs/server-db/snapshots.mdx",),
    ),
    ("what license is mastra released under", ("docs/community/licensing.mdx",)),
    ("what does Workflow.foreach do", ("reference/workflows/foreach.mdx",)),
    ("how do I start a new project from a template", ("docs/getting-started/templates.mdx",)),
    (
        "how do I talk to an agent in real time with speech to speech",
        ("docs/voice/speech-to-speech.mdx",),
    ),
    (
        "what arguments does createVectorQueryTool take",
        ("reference/tools/vector-query-tool.mdx",),
    ),
]
"""71 questions: 45 from issue 16 (38 answered by a guide under ``docs/``, 5 by a reference and 2
by an example page) and 26 from issue 29 (19 guides, 5 reference, 2 examples)."""

TUNE: Final[list[Question]] = QUESTIONS[0::2]
"""Every other question (36; 23 of issue 16): may be looked at while choosing a signal."""

HELD_OUT: Final[list[Question]] = QUESTIONS[1::2]
"""The rest (35; 22 of issue 16): only for reporting."""

HELD_OUT_OLD: Final[list[Question]] = QUESTIONS[1:45:2]
"""The 22 held-out questions of issue 16, for figures comparable with earlier runs."""
