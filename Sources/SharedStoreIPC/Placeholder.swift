public enum SharedStoreIPCPlaceholder {}
