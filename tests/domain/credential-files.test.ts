import { describe, expect, it } from 'vitest';
import { CREDENTIAL_STORES, credentialContentReason, credentialFileReason, credentialStoreOf } from '../../src/domain/credential-files.js';
import { deniedReason, outputDeniedReason } from '../../src/domain/sandbox-rules.js';

// Issue 22, point 10: well-known credential stores are never served, at any depth, whatever the case.
const DENIED: readonly string[] = [
  // environment files, and anything inside a folder named .env*
  '.env',
  '.ENV',
  '.env.local',
  'app/.env.production',
  '.envrc',
  '.env-prod',
  '.env_local',
  '.env.d/creds.txt',
  'deploy/.env.d/prod/api.txt',
  '.Env.D/notes.md',
  '.envs/prod.yaml',
  // SSH
  'id_rsa',
  'home/me/.ssh/id_ed25519',
  'keys/ID_RSA',
  'id_ecdsa_sk',
  'id_ed25519.pub',
  'id_rsa_work',
  'keys/id_xmss',
  'backup/id_dsa',
  '.ssh/config',
  '.ssh/known_hosts',
  'team/.ssh/authorized_keys',
  'putty/server.ppk',
  // TLS and signing keys, keystores
  'tls/server.key',
  'certs/server.KEY',
  'certs/chain.pem',
  'client.p12',
  'win/cert.PFX',
  'android/release.jks',
  'app.keystore',
  'AuthKey_ABC123.p8',
  'krb5.keytab',
  'secrets/vault.kdbx',
  // GnuPG, password stores
  '.gnupg/pubring.kbx',
  'notes.gpg',
  'key.asc',
  '.password-store/email/work.gpg',
  '.password-store/.gpg-id',
  'vault/old.kdb',
  'site/.htpasswd',
  // cloud
  '.aws/credentials',
  '.aws/config',
  'ci/.aws/sso/cache/token.json',
  '.azure/accessTokens.json',
  '.azure/msal_token_cache.json',
  '.config/gcloud/application_default_credentials.json',
  'home/me/.config/gcloud/credentials.db',
  '.config/gcloud/access_tokens.db',
  '.oci/config',
  '.boto',
  '.s3cfg',
  '.passwd-s3fs',
  '.databrickscfg',
  'deploy/credentials',
  'credentials.json',
  'CREDENTIALS.JSON',
  'config/credentials.yml.enc',
  'aws_credentials',
  'gcp-credentials.json',
  'application_default_credentials.json',
  'jenkins/credentials.xml',
  'accounts/credentials.csv',
  '.git-credentials',
  'service-account.json',
  'keys/service_account_prod.json',
  // Docker, Kubernetes
  '.docker/config.json',
  'home/me/.docker/config.json',
  '.DOCKER/CONFIG.JSON',
  '.dockercfg',
  '.kube/config',
  '.kube/cache/discovery/x.json',
  'ops/.kube/prod-config',
  'kubeconfig',
  'clusters/kubeconfig.yaml',
  'prod.kubeconfig',
  'prod-kubeconfig',
  'staging_kubeconfig',
  // Terraform
  'terraform.tfstate',
  'infra/terraform.tfstate.backup',
  'infra/prod/Terraform.TFSTATE',
  'x.tfstate.1700000000.backup',
  'terraform.tfstate.d/prod/terraform.tfstate',
  '.terraformrc',
  'terraform.rc',
  '.terraform.d/credentials.tfrc.json',
  // registries, logins, secret managers
  '.npmrc',
  'web/.npmrc',
  '.pypirc',
  '.gem/credentials',
  '.m2/settings-security.xml',
  '.netrc',
  '_netrc',
  '.authinfo',
  '.pgpass',
  '.my.cnf',
  '.mylogin.cnf',
  '.vault-token',
  'secrets.yaml',
  'helm/secrets.yml',
  'secrets.json',
  '.streamlit/secrets.toml',
  '.config/gh/hosts.yml',
  // Issue 35 item 8: shell and database histories
  '.bash_history',
  'home/me/.zsh_history',
  '.sh_history',
  '.history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
  '.node_repl_history',
  '.python_history',
  '.irb_history',
  '.Rhistory',
  '.clickhouse-client-history',
  '.local/share/fish/fish_history',
  '.dbshell',
  '.mongosh/mongosh_repl_history',
  'AppData/Roaming/Microsoft/Windows/PowerShell/PSReadLine/ConsoleHost_history.txt',
  '.julia/logs/repl_history.jl',
  // build tools and registries
  '.gradle/gradle.properties',
  '.m2/settings.xml',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.yarnrc',
  '.yarnrc.yml',
  'AppData/Roaming/NuGet/NuGet.Config',
  // command-line tools' logins
  '.config/hub',
  '.config/glab-cli/config.yml',
  '.config/doctl/config.yaml',
  '.config/hcloud/cli.toml',
  '.config/stripe/config.toml',
  '.config/op/config',
  '.fly/config.yml',
  '.ngrok2/ngrok.yml',
  '.config/ngrok/ngrok.yml',
  '.sentryclirc',
  '.config/rclone/rclone.conf',
  '.pulumi/credentials.json',
  'AppData/Roaming/postgresql/pgpass.conf',
  '.vault_pass',
  'ansible/vault_password.txt',
  '.vault-pass.txt',
  // web applications' configuration
  'wp-config.php',
  'blog/wp-config.php.bak',
  'wp-config.php~',
  'WP-CONFIG.PHP',
  'w/LocalSettings.php',
  'configuration.php',
  'joomla/configuration.php.old',
  'web/sites/default/settings.php',
  'sites/example.com/settings.local.php',
  'app/etc/env.php',
  'app/etc/local.xml',
  'config/database.yml',
  'app/config/parameters.yml',
  'config/parameters.yaml',
  'conf/tomcat-users.xml',
  'config/master.key',
  'config/credentials/production.key',
  'config/secrets.yml',
];

const ALLOWED: readonly string[] = [
  'docs/credentials-howto.md',
  'src/keyboard.ts',
  'terraform.md',
  'docs/terraform-state.md',
  'infra/main.tf',
  'infra/variables.tf',
  'docs/environment.md',
  'src/env.ts',
  'env/README.md',
  'docs/dotenv-guide.md',
  'docker/config.json',
  'docs/docker-config.md',
  'docs/kube-config.md',
  'kube/README.md',
  'docs/kubernetes.md',
  'deploy/id_card_scan.md',
  'identity.md',
  'src/keys.ts',
  'docs/keys.md',
  'src/monkey.ts',
  'docs/secrets-management.md',
  'docs/ssh-setup.md',
  'aws/README.md',
  'docs/aws.md',
  'src/pem-parser.ts',
  'npmrc.md',
  'docs/netrc-format.md',
  'src/credentials.ts',
  'docs/aws-credentials.md',
  'credentials.md',
  'docs/tfstate-locking.md',
  'azure/notes.md',
  'docs/api-keys-rotation.md',
  'gcloud/setup.md',
  'notes/credentialing.md',
  'package.json',
  'README.md',
  // Issue 35: look-alikes of the new rows, and files judged not credentials by nature (their
  // content is screened: a literal password in them is found by the detector)
  'wp-config-sample.php',
  'installation/configuration.php-dist',
  'sites/default/default.settings.php',
  'docs/bash-history.md',
  'HISTORY.md',
  'src/history.ts',
  'history',
  'config/database.yml.example',
  'app/config/parameters.yml.dist',
  'gradle.properties',
  'maven/settings.xml',
  'composer.json',
  'settings.py',
  'mysite/settings.py',
  'appsettings.json',
  'appsettings.Production.json',
  'Jenkinsfile',
  'k8s/deployment.yaml',
  '.github/workflows/release.yml',
  'docker-compose.yml',
  'infra/main.tf',
  'docs/vault-password-rotation.md',
  'yarn.lock',
];

describe('credential stores by name (data-driven)', () => {
  it.each(DENIED.map((p) => [p]))('refuses %s', (p) => {
    expect(credentialFileReason(p)).toMatch(/is never served: it is /);
    expect(deniedReason(p)).not.toBeNull();
  });

  it.each(ALLOWED.map((p) => [p]))('serves the look-alike %s', (p) => {
    expect(credentialFileReason(p)).toBeNull();
    expect(deniedReason(p)).toBeNull();
  });

  it('names what the file is', () => {
    expect(credentialFileReason('ops/.kube/config')).toBe('is never served: it is Kubernetes credentials');
    expect(credentialFileReason('terraform.tfstate')).toContain('Terraform state');
    expect(credentialFileReason('.env.d/creds.txt')).toContain('environment file');
  });

  it('has, for every kind of store in the table, a refused example here (the table and its tests move together)', () => {
    const reasons = DENIED.map((p) => credentialFileReason(p) ?? '');
    const untested = CREDENTIAL_STORES.filter((s) => !reasons.some((r) => r.endsWith(`it is ${s.what}`))).map((s) => s.what);
    expect(untested).toEqual([]);
  });

  it('has, for every pattern of every store, a refused example that it matches first (each row pinned)', () => {
    const hit = new Set(DENIED.map((p) => credentialStoreOf(p)?.pattern));
    const untested = CREDENTIAL_STORES.flatMap((s) => s.patterns).filter((pattern) => !hit.has(pattern));
    expect(untested).toEqual([]);
  });

  it('refuses what lies inside a credential folder, not a file merely named like one', () => {
    expect(credentialFileReason('.aws')).toBeNull(); // a file called .aws is not the AWS folder
    expect(credentialFileReason('.aws/anything/at/all.txt')).not.toBeNull();
    expect(credentialFileReason('./.kube/config')).not.toBeNull();
  });

  it('never lets an artifact overwrite a credential store', () => {
    for (const p of ['.kube/config', 'infra/terraform.tfstate', '.docker/config.json', '.npmrc', 'id_ed25519']) {
      expect(outputDeniedReason(p), p).not.toBeNull();
    }
    expect(outputDeniedReason('outputs/terraform.md')).toBeNull();
  });
});

describe('credentials by content (a renamed key)', () => {
  const pem = (label: string): string => `-----BEGIN ${label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ${label}-----\n`;

  it.each([
    ['OpenSSH', pem('OPENSSH PRIVATE KEY')],
    ['PKCS#8', pem('PRIVATE KEY')],
    ['RSA', pem('RSA PRIVATE KEY')],
    ['EC', pem('EC PRIVATE KEY')],
    ['DSA', pem('DSA PRIVATE KEY')],
    ['encrypted PKCS#8', pem('ENCRYPTED PRIVATE KEY')],
    ['PGP', pem('PGP PRIVATE KEY BLOCK')],
    ['after a comment and a BOM', `\uFEFF# backup of the deploy key\n${pem('OPENSSH PRIVATE KEY')}`],
    ['inside JSON', JSON.stringify({ key: pem('PRIVATE KEY') })],
    ['SSH2 (ssh.com)', '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "x"\nP2/56wAAA\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n'],
    ['PuTTY', 'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n'],
    ['service account', JSON.stringify({ type: 'service_account', private_key: 'x' })],
  ])('refuses a %s key', (_, text) => {
    expect(credentialContentReason(text)).toMatch(/^holds a/);
  });

  it.each([
    ['a certificate', pem('CERTIFICATE')],
    ['a public key', pem('PUBLIC KEY')],
    ['an OpenSSH public key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB me@host\n'],
    ['prose about keys', 'Rotate the private key every 90 days; never commit a BEGIN PRIVATE KEY block.\n'],
  ])('serves %s', (_, text) => {
    expect(credentialContentReason(text)).toBeNull();
  });
});
