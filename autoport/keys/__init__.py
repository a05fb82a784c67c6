"""Key rotation: `autoport keys rotate|show|reseal` (the keyring is autoport.kit.keyring)."""
