// An OpenID Connect provider for the sign-in tests: oauth2-mock-server
// (discovery, JWKS, authorization code with PKCE, RS256 ID tokens) with a
// control route, POST /_identity, that sets who the next sign-in is (sub,
// email, email_verified, name, groups). Prints its issuer URL, then serves
// until killed. The module's path comes in CAIRN_OIDC_MOCK_MODULE
// (scripts/tools/oidc-provider.sh installs it).
const { OAuth2Server, Events } = await import(process.env.CAIRN_OIDC_MOCK_MODULE);

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');

let identity = { sub: 'alice', email: 'alice@acme.test', email_verified: true, name: 'Alice', groups: [] };

server.service.addRoute('POST', '/_identity', async (req, res) => {
  identity = typeof req.body === 'string' ? JSON.parse(req.body) : req.body;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{}');
});

// After the mock's own claims (`sub: johndoe`): the identity set last.
server.service.on(Events.BeforeTokenSigning, (token) => {
  Object.assign(token.payload, identity);
});

await server.start(0, '127.0.0.1');
console.log(JSON.stringify({ issuer: server.issuer.url }));
