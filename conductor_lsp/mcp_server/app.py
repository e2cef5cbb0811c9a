"""The SDK's server around the tools: ``serve(root)`` speaks MCP over stdio until the
client hangs up. Long fixes report each event as MCP progress; a cancelled call cancels
the loop, which leaves the workspace as it was (it writes once, at the end)."""

from pathlib import Path
from typing import Any

from ..errors import BackendUnavailable, ConductorError
from ..version import __version__, extra
from .tools import Door

INSTRUCTIONS = (
    "conductor-lsp fixes a repository until its tests pass: a team of models proposes "
    "candidates, each is judged by the tests in its own sandbox, and only a verified state "
    "is written, once, with a checkpoint that undo restores."
)


def build(root: Path) -> Any:
    """The MCP server for the workspace at ``root``."""
    try:
        from mcp.server.mcpserver import Context, MCPServer
    except ImportError as e:
        raise BackendUnavailable(f"the MCP door needs the MCP SDK: {extra('mcp')}") from e
    door = Door(root)
    server = MCPServer("conductor-lsp", instructions=INSTRUCTIONS, version=__version__)

    @server.tool()
    async def fix(
        ctx: Context,
        path: str = "",
        test: str = "",
        budget_usd: float | None = None,
        instruction: str = "",
        max_iterations: int | None = None,
    ) -> dict[str, Any]:
        """Fix the repository at path (relative to the workspace) until `test` passes;
        returns the verdict, the diff, the cost and the checkpoint to undo."""

        async def report(done: int, line: str) -> None:
            await ctx.report_progress(done, None, line)

        return await _checked(door.fix(path, test, budget_usd, instruction, max_iterations, report))

    @server.tool()
    async def plan(task: str, files: list[str] | None = None, path: str = "") -> dict[str, Any]:
        """The conductor's plan for a task, in words (nothing runs, nothing is written)."""
        return await _checked(door.plan(task, files, path))

    @server.tool()
    async def undo(path: str = "", ref: str = "") -> dict[str, Any]:
        """Restore the state before the last fix (or checkpoint `ref`)."""
        return await _checked(door.undo(path, ref))

    @server.tool()
    async def candidates(path: str = "") -> dict[str, Any]:
        """The last fix's candidates: round, lane, worker, what the tests said, cost."""
        return await _checked(door.candidates(path))

    return server


async def _checked(call: Any) -> dict[str, Any]:
    """Our errors as the tool's error text (the SDK sends it with isError), never a trace."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result: dict[str, Any] = await call
    except ConductorError as e:
        raise ToolError(f"{type(e).__name__}: {e}") from e
    return result


def serve(root: Path) -> None:
    import anyio

    from .transport import serve_stdio

    anyio.run(serve_stdio, build(root))
