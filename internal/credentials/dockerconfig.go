package credentials

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// AuthConfig is a registry credential, the fields of the CRI AuthConfig. As upstream, the
// credentials of pull secrets carry a username and a password (an "auth" entry is decoded into
// them); the other fields are there for the CRI call.
type AuthConfig struct {
	Username      string
	Password      string
	Auth          string
	ServerAddress string
	IdentityToken string
	RegistryToken string
}

// dockerConfigJSON is the content of a kubernetes.io/dockerconfigjson secret (~/.docker/config.json).
type dockerConfigJSON struct {
	Auths dockerConfig `json:"auths"`
}

// dockerConfig is the content of a kubernetes.io/dockercfg secret (~/.dockercfg): registry
// (with or without scheme and path) → entry.
type dockerConfig map[string]dockerConfigEntry

// dockerConfigEntry is one registry's entry; "auth" is base64(username:password) and wins over
// username and password, as upstream's DockerConfigEntry.UnmarshalJSON.
type dockerConfigEntry struct {
	Username string
	Password string
}

func (e *dockerConfigEntry) UnmarshalJSON(data []byte) error {
	var raw struct {
		Username string `json:"username,omitempty"`
		Password string `json:"password,omitempty"`
		Auth     string `json:"auth,omitempty"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	e.Username, e.Password = raw.Username, raw.Password
	if raw.Auth == "" {
		return nil
	}
	var err error
	e.Username, e.Password, err = decodeAuth(raw.Auth)
	return err
}

// decodeAuth decodes an "auth" field, padded or not.
func decodeAuth(field string) (username, password string, err error) {
	var decoded []byte
	if strings.HasSuffix(strings.TrimSpace(field), "=") {
		decoded, err = base64.StdEncoding.DecodeString(field)
	} else {
		decoded, err = base64.RawStdEncoding.DecodeString(field)
	}
	if err != nil {
		return "", "", err
	}
	user, pass, ok := strings.Cut(string(decoded), ":")
	if !ok {
		return "", "", errors.New("unable to parse auth field, must be formatted as base64(username:password)")
	}
	return user, pass, nil
}

// KeyringFromSecrets builds the keyring of a pod's pull secrets, as upstream's MakeDockerKeyring:
// a secret of type kubernetes.io/dockerconfigjson contributes the "auths" of its .dockerconfigjson
// key, one of type kubernetes.io/dockercfg its .dockercfg key; other secrets, and those whose key
// is missing or empty, contribute nothing. A key that does not parse is an error naming the
// secret (upstream fails the pull the same way).
func KeyringFromSecrets(secrets []*v1.Secret) (*Keyring, error) {
	k := &Keyring{}
	for _, s := range secrets {
		cfg, err := secretDockerConfig(s)
		if err != nil {
			return nil, fmt.Errorf("image pull secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		k.Add(cfg)
	}
	return k, nil
}

func secretDockerConfig(s *v1.Secret) (dockerConfig, error) {
	switch data := s.Data; {
	case s.Type == v1.SecretTypeDockerConfigJson && len(data[v1.DockerConfigJsonKey]) > 0:
		var cfg dockerConfigJSON
		if err := json.Unmarshal(data[v1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("parse %s: %w", v1.DockerConfigJsonKey, err)
		}
		return cfg.Auths, nil
	case s.Type == v1.SecretTypeDockercfg && len(data[v1.DockerConfigKey]) > 0:
		var cfg dockerConfig
		if err := json.Unmarshal(data[v1.DockerConfigKey], &cfg); err != nil {
			return nil, fmt.Errorf("parse %s: %w", v1.DockerConfigKey, err)
		}
		return cfg, nil
	}
	return nil, nil
}
