"""A catalog of MCP tools shaped like those of well-known servers (GitHub, Slack, a file system,
SQL databases, a knowledge graph, a browser, issue trackers), and queries an agent would send for
them with the tool it wants: what tool_search's ranking choices are measured on
(tests/unit/test_tool_ranking.py)."""

from __future__ import annotations

from typing import Any

from s_code.tools.registry import Registry, ToolDef

# (server, tool, description, {parameter: description})
# fmt: off
CATALOG: list[tuple[str, str, str, dict[str, str]]] = [
    # GitHub
    ("github", "create_issue", "Create a new issue in a GitHub repository.",
     {"owner": "Repository owner", "repo": "Repository name", "title": "Issue title",
      "body": "Issue body content", "labels": "Labels to apply to this issue"}),
    ("github", "list_issues", "List issues in a GitHub repository with filtering options.",
     {"owner": "Repository owner", "repo": "Repository name",
      "state": "Filter by state: open, closed or all", "labels": "Filter by labels",
      "page": "Page number for pagination", "per_page": "Number of results per page"}),
    ("github", "get_issue", "Get the details of a specific issue in a GitHub repository.",
     {"owner": "Repository owner", "repo": "Repository name", "issue_number": "Issue number"}),
    ("github", "update_issue", "Update an existing issue: its title, body, state or labels.",
     {"owner": "Repository owner", "repo": "Repository name", "issue_number": "Issue number",
      "state": "New state", "title": "New title"}),
    ("github", "add_issue_comment", "Add a comment to an existing issue or pull request.",
     {"owner": "Repository owner", "repo": "Repository name", "issue_number": "Issue number",
      "body": "Comment text"}),
    ("github", "create_pull_request", "Create a new pull request in a GitHub repository.",
     {"owner": "Repository owner", "repo": "Repository name", "title": "PR title",
      "head": "The name of the branch where your changes are implemented",
      "base": "The name of the branch you want the changes pulled into",
      "draft": "Create as a draft pull request"}),
    ("github", "list_pull_requests", "List and filter the pull requests of a repository.",
     {"owner": "Repository owner", "repo": "Repository name", "state": "open, closed or all",
      "head": "Filter by head user or organization and branch name"}),
    ("github", "merge_pull_request", "Merge a pull request.",
     {"owner": "Repository owner", "repo": "Repository name", "pull_number": "Pull request number",
      "merge_method": "Merge method: merge, squash or rebase"}),
    ("github", "get_pull_request_files", "Get the list of files changed in a pull request.",
     {"owner": "Repository owner", "repo": "Repository name",
      "pull_number": "Pull request number"}),
    ("github", "create_branch", "Create a new branch in a GitHub repository.",
     {"owner": "Repository owner", "repo": "Repository name", "branch": "Name for the new branch",
      "from_branch": "Source branch (defaults to the repository default)"}),
    ("github", "list_commits", "Get the list of commits of a branch in a GitHub repository.",
     {"owner": "Repository owner", "repo": "Repository name",
      "sha": "SHA or branch to list commits from"}),
    ("github", "get_file_contents", "Get the contents of a file or directory from a repository.",
     {"owner": "Repository owner", "repo": "Repository name",
      "path": "Path to the file or directory", "branch": "Branch to get contents from"}),
    ("github", "create_or_update_file", "Create or update a single file in a repository.",
     {"owner": "Repository owner", "repo": "Repository name", "path": "Path of the file",
      "content": "Content of the file", "message": "Commit message", "branch": "Branch"}),
    ("github", "push_files", "Push several files to a repository in one commit.",
     {"owner": "Repository owner", "repo": "Repository name", "branch": "Branch to push to",
      "files": "Files to push, each with a path and content", "message": "Commit message"}),
    ("github", "search_repositories", "Search for GitHub repositories.",
     {"query": "Search query", "page": "Page number"}),
    ("github", "search_code", "Search for code across GitHub repositories.",
     {"q": "Search query using GitHub code search syntax"}),
    ("github", "fork_repository", "Fork a GitHub repository to your account or an organization.",
     {"owner": "Repository owner", "repo": "Repository name",
      "organization": "Organization to fork to"}),
    ("github", "create_repository", "Create a new GitHub repository in your account.",
     {"name": "Repository name", "description": "Repository description",
      "private": "Whether the repository should be private"}),
    # Slack
    ("slack", "list_channels", "List public channels in the workspace with pagination.",
     {"limit": "Maximum number of channels to return", "cursor": "Pagination cursor"}),
    ("slack", "post_message", "Post a new message to a Slack channel.",
     {"channel_id": "The ID of the channel to post to", "text": "The message text"}),
    ("slack", "reply_to_thread", "Reply to a specific message thread in Slack.",
     {"channel_id": "The ID of the channel", "thread_ts": "Timestamp of the parent message",
      "text": "The reply text"}),
    ("slack", "add_reaction", "Add a reaction emoji to a message.",
     {"channel_id": "The ID of the channel", "timestamp": "Message timestamp",
      "reaction": "Emoji name without colons"}),
    ("slack", "get_channel_history", "Get recent messages from a channel.",
     {"channel_id": "The ID of the channel", "limit": "Number of messages to retrieve"}),
    ("slack", "get_users", "Get a list of all users in the workspace with their basic profiles.",
     {"cursor": "Pagination cursor", "limit": "Maximum number of users to return"}),
    ("slack", "get_user_profile", "Get detailed profile information for a specific user.",
     {"user_id": "The user's ID"}),
    # File system
    ("filesystem", "read_text_file", "Read the complete contents of a file as text.",
     {"path": "Path of the file", "head": "Only the first N lines",
      "tail": "Only the last N lines"}),
    ("filesystem", "read_multiple_files", "Read the contents of several files at once.",
     {"paths": "Paths of the files to read"}),
    ("filesystem", "write_file", "Create a new file or overwrite an existing file with content.",
     {"path": "Path of the file", "content": "Content to write"}),
    ("filesystem", "edit_file", "Make line-based edits to a text file; returns a git-style diff.",
     {"path": "Path of the file", "edits": "Edits: old text and new text",
      "dryRun": "Preview changes using git-style diff format"}),
    ("filesystem", "create_directory", "Create a new directory or ensure a directory exists.",
     {"path": "Path of the directory"}),
    ("filesystem", "list_directory", "Get a listing of all files and directories in a path.",
     {"path": "Path of the directory"}),
    ("filesystem", "directory_tree", "Get a recursive tree view of files and directories as JSON.",
     {"path": "Root of the tree"}),
    ("filesystem", "move_file", "Move or rename files and directories.",
     {"source": "Source path", "destination": "Destination path"}),
    ("filesystem", "search_files", "Recursively search for files and directories matching a "
     "pattern.", {"path": "Where to start", "pattern": "Glob pattern",
                  "excludePatterns": "Patterns to exclude"}),
    ("filesystem", "get_file_info", "Retrieve metadata about a file or directory: size, creation "
     "time, last modified time, permissions.", {"path": "Path of the file"}),
    # Databases
    ("postgres", "query", "Run a read-only SQL query against the PostgreSQL database.",
     {"sql": "The SQL query to run"}),
    ("sqlite", "read_query", "Execute a SELECT query on the SQLite database.",
     {"query": "SELECT SQL query to execute"}),
    ("sqlite", "write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database.",
     {"query": "SQL query to execute"}),
    ("sqlite", "create_table", "Create a new table in the SQLite database.",
     {"query": "CREATE TABLE SQL statement"}),
    ("sqlite", "list_tables", "List all tables in the SQLite database.", {}),
    ("sqlite", "describe_table", "Get the schema information for a specific table.",
     {"table_name": "Name of the table to describe"}),
    # Knowledge graph memory
    ("memory", "create_entities", "Create multiple new entities in the knowledge graph.",
     {"entities": "Entities, each with a name, a type and observations"}),
    ("memory", "create_relations", "Create relations between entities in the knowledge graph, in "
     "active voice.", {"relations": "Relations, each from, to and a relation type"}),
    ("memory", "add_observations", "Add new observations to existing entities.",
     {"observations": "Observations, each with an entity name and contents"}),
    ("memory", "delete_entities", "Delete entities and their relations from the knowledge graph.",
     {"entityNames": "Names of the entities to delete"}),
    ("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query.",
     {"query": "Matched against entity names, types, and observation content"}),
    ("memory", "read_graph", "Read the entire knowledge graph.", {}),
    # Web
    ("fetch", "fetch", "Fetch a URL from the internet and extract its contents as markdown.",
     {"url": "URL to fetch", "max_length": "Maximum number of characters to return",
      "raw": "Get the actual HTML content without simplification"}),
    ("brave", "brave_web_search", "Perform a web search using the Brave Search API, for general "
     "queries, news, articles and online content.",
     {"query": "Search query (max 400 chars, 50 words)", "count": "Number of results (1-20)"}),
    ("brave", "brave_local_search", "Search for local businesses and places using Brave's Local "
     "Search API.", {"query": "Local search query, e.g. 'pizza near Central Park'"}),
    ("puppeteer", "puppeteer_navigate", "Navigate the browser to a URL.",
     {"url": "URL to navigate to"}),
    ("puppeteer", "puppeteer_screenshot", "Take a screenshot of the current page or an element.",
     {"name": "Name for the screenshot", "selector": "CSS selector of an element",
      "width": "Width in pixels", "height": "Height in pixels"}),
    ("puppeteer", "puppeteer_click", "Click an element on the page.",
     {"selector": "CSS selector of the element to click"}),
    ("puppeteer", "puppeteer_fill", "Fill out an input field.",
     {"selector": "CSS selector of the input field", "value": "Value to fill"}),
    # Issue trackers and monitoring
    ("jira", "create_issue", "Create a new Jira issue in a project.",
     {"project_key": "The project key", "summary": "Issue summary",
      "issue_type": "Bug, Task or Story", "description": "Issue description"}),
    ("jira", "transition_issue", "Move a Jira issue to another status in its workflow.",
     {"issue_key": "The issue key, e.g. PROJ-123", "transition_id": "The transition"}),
    ("jira", "search", "Search Jira issues with JQL.",
     {"jql": "JQL query string", "limit": "Maximum results"}),
    ("linear", "create_issue", "Create a new Linear issue for a team.",
     {"team_id": "The team", "title": "Issue title", "description": "Markdown description",
      "priority": "Priority from 0 (none) to 4 (low)"}),
    ("sentry", "get_sentry_issue", "Retrieve and analyze a Sentry issue by ID or URL: its stack "
     "trace and error details.", {"issue_id_or_url": "Sentry issue ID or URL"}),
    # Time
    ("time", "get_current_time", "Get the current time in a specific timezone.",
     {"timezone": "IANA timezone name, e.g. 'America/New_York'"}),
    ("time", "convert_time", "Convert a time between timezones.",
     {"source_timezone": "Source IANA timezone", "time": "Time in 24-hour format (HH:MM)",
      "target_timezone": "Target IANA timezone"}),
]
# fmt: on

# (query, the tool wanted): how agents phrase what they need.
QUERIES: list[tuple[str, str]] = [
    ("create github issue", "mcp__github__create_issue"),
    ("open a new issue on github", "mcp__github__create_issue"),
    ("list open issues", "mcp__github__list_issues"),
    ("comment on an issue", "mcp__github__add_issue_comment"),
    ("create pull request", "mcp__github__create_pull_request"),
    ("merge pull request", "mcp__github__merge_pull_request"),
    ("files changed in a pull request", "mcp__github__get_pull_request_files"),
    ("create branch", "mcp__github__create_branch"),
    ("commits on a branch", "mcp__github__list_commits"),
    ("fork repository", "mcp__github__fork_repository"),
    ("search code on github", "mcp__github__search_code"),
    ("push files in one commit", "mcp__github__push_files"),
    ("send slack message", "mcp__slack__post_message"),
    ("post message to channel", "mcp__slack__post_message"),
    ("reply in a slack thread", "mcp__slack__reply_to_thread"),
    ("emoji reaction", "mcp__slack__add_reaction"),
    ("slack channels", "mcp__slack__list_channels"),
    ("recent messages of a channel", "mcp__slack__get_channel_history"),
    ("user profile", "mcp__slack__get_user_profile"),
    ("write file", "mcp__filesystem__write_file"),
    ("read several files", "mcp__filesystem__read_multiple_files"),
    ("make a directory", "mcp__filesystem__create_directory"),
    ("rename file", "mcp__filesystem__move_file"),
    ("directory tree", "mcp__filesystem__directory_tree"),
    ("file size and permissions", "mcp__filesystem__get_file_info"),
    ("postgres sql query", "mcp__postgres__query"),
    ("sqlite tables", "mcp__sqlite__list_tables"),
    ("table schema", "mcp__sqlite__describe_table"),
    ("insert rows into sqlite", "mcp__sqlite__write_query"),
    ("knowledge graph entities", "mcp__memory__create_entities"),
    ("delete entities", "mcp__memory__delete_entities"),
    ("fetch url", "mcp__fetch__fetch"),
    ("web search", "mcp__brave__brave_web_search"),
    ("restaurants nearby", "mcp__brave__brave_local_search"),
    ("take a screenshot", "mcp__puppeteer__puppeteer_screenshot"),
    ("click element", "mcp__puppeteer__puppeteer_click"),
    ("fill input field", "mcp__puppeteer__puppeteer_fill"),
    ("create jira issue", "mcp__jira__create_issue"),
    ("jql", "mcp__jira__search"),
    ("move jira issue status", "mcp__jira__transition_issue"),
    ("linear issue for a team", "mcp__linear__create_issue"),
    ("sentry error stack trace", "mcp__sentry__get_sentry_issue"),
    ("current time in a timezone", "mcp__time__get_current_time"),
    ("convert timezone", "mcp__time__convert_time"),
    # the other number than the tool's own words
    ("search repository", "mcp__github__search_repositories"),
    ("create an entity in the knowledge graph", "mcp__memory__create_entities"),
    ("add observation", "mcp__memory__add_observations"),
    ("relation between two entities", "mcp__memory__create_relations"),
    ("list pull request", "mcp__github__list_pull_requests"),
    ("list directories", "mcp__filesystem__list_directory"),
    ("screenshots", "mcp__puppeteer__puppeteer_screenshot"),
    ("reactions", "mcp__slack__add_reaction"),
    ("issue comments", "mcp__github__add_issue_comment"),
    ("delete entity", "mcp__memory__delete_entities"),
    # built-in tools among them
    ("git blame", "git_blame"),
    ("who changed this line", "git_blame"),
    ("show a commit", "git_show"),
    ("regular expression search", "search_text"),
    ("run a command in the sandbox", "run_command"),
    ("edit files", "apply_patch"),
]


async def _echo(session: Any, args: Any) -> Any:
    return dict(args)


def mcp_tool(server: str, tool: str, description: str, params: dict[str, str]) -> ToolDef:
    schema = {
        "type": "object",
        "properties": {p: {"type": "string", "description": d} for p, d in params.items()},
    }
    return ToolDef(
        name=f"mcp__{server}__{tool}",
        description=description,
        handler=_echo,
        read_only=True,
        schema=schema,
        profile="specialized",
        source=f"mcp:{server}",
    )


def catalog_registry() -> Registry:
    """The built-in tools and the catalog's."""
    from s_code.tools.builtin import default_registry

    return default_registry().extend(mcp_tool(*entry) for entry in CATALOG)
