"""The platform on one machine: `arena up` (every service as a child process), `arena
tournament` (resumable bot tournaments through the platform) and `arena bench e2e`."""
