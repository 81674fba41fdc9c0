package io.github.ratelimit.gateway.redis;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The replies of Redis 7.0.15 (copied from a real server) as the limiter's futures complete with them. */
class RedisAccessProblemTest {

	@Test
	void refusedCredentialsBehindAConnectFailure() {
		Throwable error = new CompletionException(new RedisConnectionException("Unable to connect to 127.0.0.1:6380",
				new RedisCommandExecutionException("WRONGPASS invalid username-password pair or user is disabled.")));
		assertThat(RedisAccessProblem.of(error)).isEqualTo(RedisAccessProblem.AUTHENTICATION);
		assertThat(RedisAccessProblem.reason(error))
			.isEqualTo("WRONGPASS invalid username-password pair or user is disabled.");
		assertThat(RedisAccessProblem.of(new RedisCommandExecutionException("NOAUTH Authentication required.")))
			.isEqualTo(RedisAccessProblem.AUTHENTICATION);
	}

	@Test
	void permissionsRefusedBeforeAndInsideTheScript() {
		assertThat(RedisAccessProblem.of(new CompletionException(new RedisCommandExecutionException(
				"NOPERM this user has no permissions to access one of the keys used as arguments"))))
			.isEqualTo(RedisAccessProblem.PERMISSION);
		Throwable inScript = new RedisCommandExecutionException("ERR The user executing the script can't run this "
				+ "command or subcommand script: d61ad525e0eec41d5604f953e2801729bfe6a594, on @user_script:1.");
		assertThat(RedisAccessProblem.of(inScript)).isEqualTo(RedisAccessProblem.PERMISSION);
		assertThat(RedisAccessProblem.of(new RedisCommandExecutionException("ERR The user executing the script "
				+ "can't access at least one of the keys mentioned in the command arguments")))
			.isEqualTo(RedisAccessProblem.PERMISSION);
	}

	@Test
	void anythingElseIsNoAccessProblem() {
		assertThat(RedisAccessProblem.of(new RedisConnectionException("Unable to connect to 127.0.0.1:6380")))
			.isEqualTo(RedisAccessProblem.OTHER);
		assertThat(RedisAccessProblem.of(new TimeoutException())).isEqualTo(RedisAccessProblem.OTHER);
		assertThat(RedisAccessProblem.of(new RedisCommandExecutionException("WRONGTYPE Operation against a key "
				+ "holding the wrong kind of value"))).isEqualTo(RedisAccessProblem.OTHER);
		assertThat(RedisAccessProblem.of(null)).isEqualTo(RedisAccessProblem.OTHER);
	}

}
