import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** A tool call's answer as the SDK hands it over. */
export type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: any };

/** An MCP client of the service, opened with the user's API key over either transport. */
export async function connectMcp(baseUrl: string, apiKey: string, transport: 'streamable' | 'sse'): Promise<Client> {
  const headers = { Authorization: `Bearer ${apiKey}` };
  const keyedFetch = (url: string | URL, init?: RequestInit) => {
    const h = new Headers(init?.headers);
    h.set('Authorization', headers.Authorization);
    return fetch(url, { ...init, headers: h });
  };
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    transport === 'streamable'
      ? new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } })
      : new SSEClientTransport(new URL(`${baseUrl}/mcp/sse`), { requestInit: { headers }, fetch: keyedFetch }),
  );
  return client;
}
