// A real OpenID provider for the OpenID Connect tests: the npm package oidc-provider (certified), run by
// the oidc_provider fixture (oidcop.py) as `node oidc_provider.mjs CONFIG.json`.
//
// CONFIG: {port, clients: [...], jwks: {keys: [private JWKs]}, accounts: FILE, thin_id_tokens}. The accounts file maps a
// login to its claims and is read at every sign-in, so a test changes someone's groups between two
// sign-ins by rewriting it. The development login and consent forms (devInteractions) stand in for the
// provider's own pages: any password is accepted for a login the accounts file names.
import fs from 'node:fs';

import Provider from 'oidc-provider';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: config.jwks,
  // Scope claims go into the ID token too (code flow), as Keycloak and Google send them; with
  // `thin_id_tokens` only into the userinfo answer, as Okta's code flow does.
  conformIdTokenClaims: Boolean(config.thin_id_tokens),
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['given_name', 'family_name', 'name', 'department'],
    groups: ['groups'],
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['tessera-test-provider-cookie-key'] },
  async findAccount(ctx, id) {
    const accounts = JSON.parse(fs.readFileSync(config.accounts, 'utf8'));
    if (!Object.hasOwn(accounts, id)) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...accounts[id] }; } };
  },
});

// Quiet: errors the tests provoke on purpose are reported to the relying party, not here.
provider.on('server_error', (ctx, err) => console.error('server_error', err));
provider.listen(config.port, '127.0.0.1', () => console.log(`listening ${issuer}`));
