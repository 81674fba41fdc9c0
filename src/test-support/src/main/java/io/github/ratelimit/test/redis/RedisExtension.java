package io.github.ratelimit.test.redis;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving tests the {@link TestRedis#shared() shared test Redis}.
 *
 * <ul>
 *   <li>Resolves constructor, lifecycle and test method parameters of type {@link TestRedis}.</li>
 *   <li>Flushes all data and Lua scripts ({@link TestRedis#flushAll()}) once before each test class, so each class
 *       starts from an empty Redis. Data is not flushed between the methods of one class.</li>
 * </ul>
 *
 * <pre>{@code
 * @ExtendWith(RedisExtension.class)
 * class BucketTest {
 *     @Test
 *     void refills(TestRedis redis) {
 *         redis.command("SET", "k", "v");
 *     }
 * }
 * }</pre>
 */
public final class RedisExtension implements BeforeAllCallback, ParameterResolver {

    /**
     * Creates the extension; JUnit does this for {@code @ExtendWith(RedisExtension.class)}.
     */
    public RedisExtension() {
    }

    /**
     * Flushes the shared Redis before the test class runs (starting it if needed).
     *
     * @param context the test class context
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        TestRedis.shared().flushAll();
    }

    /**
     * Whether the parameter is a {@link TestRedis}.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current context
     * @return {@code true} for parameters of type {@link TestRedis}
     */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == TestRedis.class;
    }

    /**
     * Resolves a {@link TestRedis} parameter.
     *
     * @param parameterContext the parameter to resolve
     * @param extensionContext the current context
     * @return {@link TestRedis#shared()}
     */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return TestRedis.shared();
    }
}
